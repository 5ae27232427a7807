// @ts-check
// The services by name, each with the same three operations.
import { sqsDriver } from './elasticmq.mjs';
import { kafkaDriver } from './kafka.mjs';
import { postgresDriver } from './postgres.mjs';
import { rabbitmqDriver } from './rabbitmq.mjs';
import { redisDriver } from './redis.mjs';
import { redisClusterDriver } from './redisCluster.mjs';

/**
 * @typedef {object} ServiceDriver
 * @property {import('./urls.mjs').ServiceName} name
 * @property {(ctx: import('./lifecycle.mjs').Context) => Promise<import('./lifecycle.mjs').EnsureOutcome>} ensure
 *   make it answer: check, or start what is missing
 * @property {(ctx: import('./lifecycle.mjs').Context) => Promise<import('./lifecycle.mjs').StopOutcome[]>} stop
 *   stop only processes that a pid file says `up` started
 * @property {(ctx: import('./lifecycle.mjs').Context) => Promise<import('./status.mjs').ServiceStatus>} status
 */

/** @type {Record<import('./urls.mjs').ServiceName, ServiceDriver>} */
export const DRIVERS = {
  redis: redisDriver,
  rabbitmq: rabbitmqDriver,
  kafka: kafkaDriver,
  sqs: sqsDriver,
  postgres: postgresDriver,
  'redis-cluster': redisClusterDriver,
};
