import { runHttpConformance } from '@idemq/conformance';
import { centreHarness, honoHarness } from './conformanceHarnesses.js';

// The HTTP conformance suite (H01–H14) against the fetch centre and the Hono binding, on the
// memory store and on a real Redis (which adds the store-down and the killed-process cases).
runHttpConformance(centreHarness('memory'));
runHttpConformance(centreHarness('redis'));
runHttpConformance(honoHarness('memory'));
runHttpConformance(honoHarness('redis'));
