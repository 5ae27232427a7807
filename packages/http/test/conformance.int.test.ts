import { runHttpConformance } from '@idemq/conformance';
import {
  centreHarness,
  expressHarness,
  fastifyHarness,
  honoHarness,
  nodeHarness,
} from './conformanceHarnesses.js';

// The HTTP conformance suite (H01–H14) against the fetch centre and every binding (node:http,
// Hono, Express, Fastify), on the memory store and on a real Redis (which adds the store-down and the
// killed-process cases).
runHttpConformance(centreHarness('memory'));
runHttpConformance(centreHarness('redis'));
runHttpConformance(nodeHarness('memory'));
runHttpConformance(nodeHarness('redis'));
runHttpConformance(honoHarness('memory'));
runHttpConformance(honoHarness('redis'));
runHttpConformance(expressHarness('memory'));
runHttpConformance(expressHarness('redis'));
runHttpConformance(fastifyHarness('memory'));
runHttpConformance(fastifyHarness('redis'));
