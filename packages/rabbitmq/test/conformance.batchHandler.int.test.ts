import { randomUUID } from 'node:crypto';
import { runTransportConformance } from '@idemq/conformance';
import { redisStore } from '@idemq/redis';
import { inject } from 'vitest';
import { rabbitmqHarness } from './harness.js';

// C11 and C17–C33 (the consumer-level cases) with a batch handler on the Redis store: the
// claimed messages of each fetched batch go to one call, and every guarantee the per-message
// handler has must hold for each item (the per-message runs are in the other files).
const quorum = rabbitmqHarness('quorum');
const prefix = `idemq-conformance-${randomUUID().slice(0, 8)}`;
runTransportConformance({
  ...quorum,
  name: `${quorum.name} + redis store, batch handler`,
  createStore: async () => redisStore({ url: inject('redisUrl'), prefix }),
  handlers: 'batch',
  cases: (id) => id === 'C11' || (id >= 'C17' && id <= 'C33'),
});
