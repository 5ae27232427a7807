import { randomUUID } from 'node:crypto';
import type { TransportHarness } from '@idemq/conformance';
import type { Capabilities, Logger } from '@idemq/core';
import { serviceUrls, trackedSockets } from '@idemq/services';
import { type Admin, Kafka, logLevel } from 'kafkajs';
import { afterAll, afterEach } from 'vitest';
import {
  type AdminClient,
  type KafkaTransport,
  type KafkaTransportOptions,
  kafka,
  kafkajsClient,
  wholeResponseSockets,
} from '../src/index.js';
import { TEST_TIMINGS } from './timings.js';

export { TEST_TIMINGS };

export const brokers = serviceUrls().kafkaBrokers;

/** Partitions of every test topic: enough for three lanes in flight at once (C17, C22). */
export const PARTITIONS = 3;

let adminClient: Promise<Admin> | undefined;
let topicAdmin: AdminClient | undefined;
afterAll(async () => {
  await (await adminClient?.catch(() => undefined))?.disconnect();
  await topicAdmin?.close();
});

/** One admin connection per test file, closed after the file. */
export function admin(): Promise<Admin> {
  adminClient ??= (async () => {
    const client = new Kafka({
      clientId: 'idemq-test',
      brokers,
      logLevel: logLevel.NOTHING,
      // A loaded machine can take seconds to show a new topic's leaders in metadata.
      retry: { retries: 12, initialRetryTime: 100, maxRetryTime: 2_000 },
    }).admin();
    await client.connect();
    return client;
  })();
  return adminClient;
}

/** A fresh topic name. */
export function topicName(label = 'topic'): string {
  return `idemq-${label}-${randomUUID().slice(0, 8)}`;
}

/** Creates topics with `PARTITIONS` partitions and waits until every partition has a leader. */
export async function createTopics(topics: readonly string[], partitions = PARTITIONS) {
  // The transport's own topic creation, which waits out a busy broker's slow metadata.
  topicAdmin ??= kafkajsClient(
    new Kafka({ clientId: 'idemq-test', brokers, logLevel: logLevel.NOTHING }),
  ).admin();
  const creating = topicAdmin;
  await Promise.all(topics.map((topic) => creating.createTopic(topic, partitions)));
}

/** Transport warnings on stderr when IDEMQ_KAFKA_TEST_LOG is set (to diagnose a failing case). */
const testLogger: Logger | undefined = process.env.IDEMQ_KAFKA_TEST_LOG
  ? {
      debug: () => {},
      info: () => {},
      warn: (fields, message) => console.warn(message, JSON.stringify(fields)),
      error: (fields, message) => console.error(message, JSON.stringify(fields)),
    }
  : undefined;

/** A transport with the test timings. */
export function testTransport(options: Partial<KafkaTransportOptions> = {}): KafkaTransport {
  return kafka({
    ...(options.kafka || options.client ? {} : { brokers }),
    ...TEST_TIMINGS,
    ...(testLogger ? { logger: testLogger } : {}),
    ...options,
  });
}

/**
 * The conformance harness for one configuration: every `connect()` is a new client (another
 * process, as far as the group is concerned); every source is a new topic with its dead-letter
 * topic (and retry topic in `topic` mode). `capabilities` is what the configuration must declare
 * (from `expectedCapabilities.ts`), which C00 checks.
 */
export function kafkaHarness(
  name: string,
  options: Partial<KafkaTransportOptions>,
  capabilities: Capabilities,
): TransportHarness {
  const inspector = testTransport(options);
  afterAll(() => inspector.close());
  // Every socket the harness's clients open, so C24 can cut them all as a network would.
  const sockets = trackedSockets();
  return {
    name,
    capabilities,
    connect: async () => {
      const { brokers: _brokers, ...rest } = options;
      return testTransport({
        ...rest,
        kafka: new Kafka({
          clientId: 'idemq-test',
          brokers,
          logLevel: logLevel.NOTHING,
          // As the README asks of a Kafka built outside the transport.
          socketFactory: wholeResponseSockets(sockets.socketFactory),
        }),
      });
    },
    interruptConnections: () => {
      if (sockets.cut() === 0) throw new Error('interruptConnections: no connection to cut');
    },
    newSource: async () => {
      const source = topicName('conformance');
      const extra = options.retryMode === 'topic' ? [`${source}.retry`] : [];
      await createTopics([source, `${source}.dlq`, ...extra]);
      return source;
    },
    deadLetterOf: (source) => `${source}.dlq`,
    inspect: {
      depth: async (destination, group = 'default') => {
        const { pending, delayed } = await inspector.backlog(destination, group);
        return { ready: pending, inFlight: 0, delayed };
      },
    },
    timing: { waitMs: 15_000, quietMs: 500, caseTimeoutMs: 60_000 },
  };
}

/**
 * A list the calling test file pushes what it opens onto; after each test, everything on it is
 * closed, newest first.
 */
export function closedAfterEach(): Array<{ close(): Promise<unknown> }> {
  const opened: Array<{ close(): Promise<unknown> }> = [];
  afterEach(async () => {
    await Promise.allSettled(
      opened
        .splice(0)
        .reverse()
        .map((resource) => resource.close()),
    );
  });
  return opened;
}

/** Polls `check` every 25 ms until it holds; throws naming `what` after `timeoutMs`. */
export async function eventually(
  check: () => Promise<boolean> | boolean,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
