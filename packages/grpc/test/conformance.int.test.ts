import { runGrpcConformance } from '@idemq/conformance/grpc';
import { interceptorHarness } from './conformanceHarnesses.js';

// The gRPC conformance suite (G01–G12) against the grpc-js interceptor, on the memory store and
// on a real Redis (which adds the store-down and the killed-process cases).
runGrpcConformance(interceptorHarness('memory'));
runGrpcConformance(interceptorHarness('redis'));
