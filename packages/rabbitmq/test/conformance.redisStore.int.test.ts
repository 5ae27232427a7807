import { randomUUID } from 'node:crypto';
import { runTransportConformance } from '@idemq/conformance';
import { redisStore } from '@idemq/redis';
import { inject } from 'vitest';
import { rabbitmqHarness } from './harness.js';

// C11 and C17–C33 (the consumer-level cases: dead letters, concurrency, drain, reconnection,
// dedup, crashes, store failures, events) again on the Redis store, so that real RabbitMQ and
// real Redis meet in the suite; the full suite runs on quorum and classic queues with the
// in-memory store in the other files.
const quorum = rabbitmqHarness('quorum');
const prefix = `idemq-conformance-${randomUUID().slice(0, 8)}`;
runTransportConformance({
  ...quorum,
  name: `${quorum.name} + redis store`,
  createStore: async () => redisStore({ url: inject('redisUrl'), prefix }),
  cases: (id) => id === 'C11' || (id >= 'C17' && id <= 'C33'),
});
