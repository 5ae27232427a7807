import { runHttpConformance } from '@idemq/conformance';
import {
  centreHarness,
  expressHarness,
  fastifyHarness,
  honoHarness,
} from './conformanceHarnesses.js';

// The HTTP conformance suite (H01–H14) against the fetch centre and every binding (Hono, Express,
// Fastify), on the memory store and on a real Redis (which adds the store-down and the
// killed-process cases).
runHttpConformance(centreHarness('memory'));
runHttpConformance(centreHarness('redis'));
runHttpConformance(honoHarness('memory'));
runHttpConformance(honoHarness('redis'));
runHttpConformance(expressHarness('memory'));
runHttpConformance(expressHarness('redis'));
runHttpConformance(fastifyHarness('memory'));
runHttpConformance(fastifyHarness('redis'));
