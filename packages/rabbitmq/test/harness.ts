import { randomUUID } from 'node:crypto';
import type { TransportHarness } from '@idemq/conformance';
import { inject } from 'vitest';
import { defaultQueueName, type QueueType, type RabbitmqOptions, rabbitmq } from '../src/index.js';
import { BrokerAdmin, cuttableConnections } from './broker.js';
import { EXPECTED_CAPABILITIES } from './expectedCapabilities.js';

const DEAD_LETTER_SUFFIX = '.dlq';

/**
 * Every group reading a dead-letter destination shares its one queue (what an operator's DLQ
 * is); other destinations get a queue per group. The suite reads dead letters with a group of
 * its own, after they were written: a queue per group would not exist yet to receive them.
 */
export function queueName(source: string, group: string): string {
  return source.endsWith(DEAD_LETTER_SUFFIX) ? source : defaultQueueName(source, group);
}

/** Options of every connection the tests open on the main test vhost. */
export function testOptions(queueType: QueueType, extra: Partial<RabbitmqOptions> = {}) {
  return {
    url: inject('amqp').url,
    queueType,
    queueName,
    deadLetterSuffix: DEAD_LETTER_SUFFIX,
    connectTimeoutMs: 5_000,
    connectionName: `idemq-test-${queueType}`,
    ...extra,
  } satisfies RabbitmqOptions;
}

/** A destination name no other test uses. */
export function uniqueSource(label = 'src'): string {
  return `${label}-${randomUUID().slice(0, 8)}`;
}

/** The conformance harness of one queue type, on the test run's vhost. */
export function rabbitmqHarness(queueType: QueueType): TransportHarness {
  const { vhosts } = inject('amqp');
  const admin = vhosts === undefined ? undefined : BrokerAdmin.local();
  const { url, ...options } = testOptions(queueType);
  // Every connection the transports open (again), so C24 can cut them all as a network would.
  const connections = cuttableConnections(url, options.connectionName);
  return {
    name: `rabbitmq (${queueType})`,
    capabilities: EXPECTED_CAPABILITIES[queueType],
    connect: async () => rabbitmq({ ...options, connection: connections.connect }),
    interruptConnections: () => {
      if (connections.cut() === 0) throw new Error('interruptConnections: no connection to cut');
    },
    newSource: async () => uniqueSource(`c-${queueType}`),
    deadLetterOf: (source) => source + DEAD_LETTER_SUFFIX,
    // Ready and unacked from the broker itself; delayed = what waits in the retry tiers.
    ...(admin && vhosts
      ? {
          inspect: {
            depth: async (destination, group = 'default') => {
              const queue = queueName(destination, group);
              const queues = await admin.queues(vhosts.main);
              const own = queues.get(queue) ?? { ready: 0, unacked: 0 };
              let delayed = 0;
              for (const [name, counts] of queues) {
                if (name.startsWith(`${queue}.retry.`)) delayed += counts.ready + counts.unacked;
              }
              return { ready: own.ready, inFlight: own.unacked, delayed };
            },
          },
        }
      : {}),
    timing: { waitMs: 10_000, quietMs: 200, caseTimeoutMs: 30_000 },
  };
}
