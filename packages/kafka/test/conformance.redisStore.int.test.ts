import { randomUUID } from 'node:crypto';
import { runTransportConformance } from '@idemq/conformance';
import { redisStore } from '@idemq/redis';
import { serviceUrls } from '@idemq/services';
import { EXPECTED_CAPABILITIES } from './expectedCapabilities.js';
import { kafkaHarness } from './helpers.js';

// C11 and C17–C33 (the consumer-level cases: dead letters, concurrency, drain, reconnection,
// dedup, crashes, store failures, events) again on the Redis store, so that real Kafka and real
// Redis meet in the suite; the full suite runs in every mode with the in-memory store in the
// other files.
const inOrder = kafkaHarness(
  'kafka (in order, in-place retry)',
  {},
  EXPECTED_CAPABILITIES.inOrderInPlace,
);
const prefix = `idemq-conformance-${randomUUID().slice(0, 8)}`;
runTransportConformance({
  ...inOrder,
  name: `${inOrder.name} + redis store`,
  createStore: async () => redisStore({ url: serviceUrls().redis, prefix }),
  cases: (id) => id === 'C11' || (id >= 'C17' && id <= 'C33'),
});
