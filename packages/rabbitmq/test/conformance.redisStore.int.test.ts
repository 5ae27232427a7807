import { randomUUID } from 'node:crypto';
import { runTransportConformance, type TransportHarness } from '@idemq/conformance';
import { redisStore } from '@idemq/redis';
import { inject } from 'vitest';
import { rabbitmqHarness } from './harness.js';

// C11 and C17–C33 (the consumer-level cases: dead letters, concurrency, drain, reconnection, dedup,
// crashes, store failures, events) again on the Redis store, with a per-message handler and with a
// batch handler, so that real RabbitMQ and real Redis meet in the suite; the full suite runs on
// quorum and classic queues with the in-memory store in the other files.
const quorum = rabbitmqHarness('quorum');
const prefix = `idemq-conformance-${randomUUID().slice(0, 8)}`;
const onRedis: TransportHarness = {
  ...quorum,
  name: `${quorum.name} + redis store`,
  createStore: async () => redisStore({ url: inject('redisUrl'), prefix }),
  cases: (id: string) => id === 'C11' || (id >= 'C17' && id <= 'C33'),
};
runTransportConformance(onRedis);
// The same cases with a batch handler: the claimed messages of each fetched batch in one call,
// every guarantee of the per-message handler holding for each item.
runTransportConformance({ ...onRedis, name: `${onRedis.name}, batch handler`, handlers: 'batch' });
