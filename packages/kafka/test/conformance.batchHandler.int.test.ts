import { randomUUID } from 'node:crypto';
import { runTransportConformance } from '@idemq/conformance';
import { redisStore } from '@idemq/redis';
import { serviceUrls } from '@idemq/services';
import { EXPECTED_CAPABILITIES } from './expectedCapabilities.js';
import { kafkaHarness } from './helpers.js';

// C11 and C17–C33 (the consumer-level cases) with a batch handler on the Redis store: the
// claimed messages of each fetched batch go to one call, and every guarantee the per-message
// handler has must hold for each item (the per-message runs are in the other files).
const inOrder = kafkaHarness(
  'kafka (in order, in-place retry)',
  {},
  EXPECTED_CAPABILITIES.inOrderInPlace,
);
const prefix = `idemq-conformance-${randomUUID().slice(0, 8)}`;
runTransportConformance({
  ...inOrder,
  name: `${inOrder.name} + redis store, batch handler`,
  createStore: async () => redisStore({ url: serviceUrls().redis, prefix }),
  handlers: 'batch',
  cases: (id) => id === 'C11' || (id >= 'C17' && id <= 'C33'),
});
