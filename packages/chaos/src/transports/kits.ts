/**
 * One broker as a fault run uses it, from the parent process: fresh destinations per run, the
 * spec the consumers connect with, a publisher, bad-input injection through the broker's own
 * client, the F04 fault, and teardown that leaves nothing of the run behind.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { type MessageAttributeValue, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { type MemoryBroker, memoryBroker, type Transport } from '@idemq/core';
import { InternalHeaders } from '@idemq/rabbitmq';
import { TcpProxy } from '@idemq/services';
import { declareQueue, deleteQueue, MessageAttributeNames } from '@idemq/sqs';
import amqplib from 'amqplib';
import { type Admin, Kafka, logLevel } from 'kafkajs';
import type { RabbitmqServer } from '../rabbitmqServer.js';
import type { WorkerPool } from '../workerPool.js';
import {
  type BadInputKind,
  MALFORMED_JSON,
  NON_UTF8_BODY,
  NON_UTF8_ID,
  OVERSIZED_ID,
} from './badInputs.js';
import { openTransport, type TransportName, type TransportSpec } from './spec.js';

const run = promisify(execFile);

export interface ServiceAddresses {
  amqp: string;
  kafkaBrokers: string[];
  sqsEndpoint: string;
  sqsRegion: string;
}

export interface BrokerKit {
  readonly name: TransportName;
  /** What consumers connect with. */
  readonly spec: TransportSpec;
  /** The shared in-process broker (memory only): consumers then run in-process. */
  readonly broker?: MemoryBroker;
  readonly source: string;
  readonly deadLetterSource: string;
  /** The parent's own connection: publisher and dead-letter reader. */
  readonly transport: Transport;
  /** Publishes one copy of `kind` through the broker's own client. */
  publishBad(kind: BadInputKind): Promise<void>;
  /** The F04 fault; returns what it did, for the report. */
  breakConnections(pool: WorkerPool, random: () => number): Promise<string>;
  /** Stops the run's private broker and starts it again (only a kit on one has it). */
  restartBroker?(): Promise<string>;
  /**
   * Where the run's messages sit, by queue (ready, unacked, and dead letters a queue still holds),
   * for a run that did not settle: copies parked in a retry tier, held by a consumer, or nowhere.
   * Only where the broker says.
   */
  queueDepths?(): Promise<string>;
  close(): Promise<void>;
}

/** How each transport's F04 fault is made, for the docs and the table. */
export const F04_METHOD: Readonly<Record<TransportName, string>> = {
  memory: 'simulated: every consumer connection dropped and reopened',
  rabbitmq: 'rabbitmqctl close_all_connections on the run vhost',
  kafka: 'every consumer TCP socket to the broker reset from inside the process',
  sqs: 'TCP proxy in front of ElasticMQ resets all connections, refuses new ones 2 s',
};

/** `privateRabbitmq`: the RabbitMQ kit runs on that node instead of the shared broker. */
export async function prepareKit(
  name: TransportName,
  services: ServiceAddresses,
  privateRabbitmq?: RabbitmqServer,
): Promise<BrokerKit> {
  const runId = `${Date.now().toString(36)}-${randomUUID().slice(0, 6)}`;
  if (privateRabbitmq && name !== 'rabbitmq') {
    throw new Error(`a private RabbitMQ node is for the rabbitmq transport, not ${name}`);
  }
  switch (name) {
    case 'memory':
      return memoryKit(runId);
    case 'rabbitmq':
      return rabbitmqKit(runId, services.amqp, privateRabbitmq);
    case 'kafka':
      return kafkaKit(runId, services.kafkaBrokers);
    case 'sqs':
      return sqsKit(runId, services.sqsEndpoint, services.sqsRegion);
  }
}

function memoryKit(runId: string): BrokerKit {
  const broker = memoryBroker();
  const source = `chaos-${runId}`;
  const { transport } = openTransport({ kind: 'memory' }, broker);
  const rawIds: Record<BadInputKind, unknown> = {
    'missing-id': undefined,
    'empty-id': '',
    'oversized-id': OVERSIZED_ID,
    'non-utf8-id': NON_UTF8_ID,
    'malformed-json-body': randomUUID(),
    'non-utf8-body': randomUUID(),
  };
  return {
    name: 'memory',
    spec: { kind: 'memory' },
    broker,
    source,
    deadLetterSource: `${source}.dlq`,
    transport,
    async publishBad(kind) {
      broker.publish({
        requestId: rawIds[kind],
        body: badBody(kind),
        headers: {},
        destination: source,
        publishedAt: Date.now(),
      });
    },
    async breakConnections(pool, random) {
      await pool.restartAll(random);
      return F04_METHOD.memory;
    },
    close: () => transport.close(),
  };
}

async function rabbitmqKit(
  runId: string,
  sharedAmqpUrl: string,
  node: RabbitmqServer | undefined,
): Promise<BrokerKit> {
  // A vhost of its own: closing its connections touches no other test or engineer.
  const vhost = `idemq-chaos-${runId}`;
  const ctl = async (...args: string[]) =>
    node ? node.ctl(...args) : run('rabbitmqctl', args, { timeout: 60_000 });
  await ctl('add_vhost', vhost);
  await ctl('set_permissions', '-p', vhost, 'guest', '.*', '.*', '.*');
  const url = new URL(node?.url ?? sharedAmqpUrl);
  url.pathname = `/${encodeURIComponent(vhost)}`;
  const spec: TransportSpec = { kind: 'rabbitmq', url: url.toString() };
  const source = 'chaos';
  const { transport } = openTransport(spec);
  let raw: amqplib.ChannelModel | undefined;
  return {
    name: 'rabbitmq',
    spec,
    source,
    deadLetterSource: `${source}.dlq`,
    transport,
    async publishBad(kind) {
      raw ??= await amqplib.connect(url.toString());
      const channel = await raw.createConfirmChannel();
      const options: amqplib.Options.Publish = { persistent: true, headers: {} };
      if (kind === 'empty-id') options.messageId = '';
      if (kind === 'oversized-id') options.headers = { [InternalHeaders.requestId]: OVERSIZED_ID };
      if (kind === 'non-utf8-id') {
        options.headers = { [InternalHeaders.requestId]: Buffer.from(NON_UTF8_ID) };
      }
      if (kind.endsWith('-body')) options.messageId = randomUUID();
      // Straight into the consumers' queue (the default queue of the source).
      await new Promise<void>((resolve, reject) =>
        channel.sendToQueue(source, Buffer.from(badBody(kind)), options, (error) =>
          error ? reject(error) : resolve(),
        ),
      );
      await channel.close();
    },
    async breakConnections() {
      await ctl('close_all_connections', '-p', vhost, 'idemq chaos F04');
      return F04_METHOD.rabbitmq;
    },
    ...(node && {
      async restartBroker() {
        const startedAt = performance.now();
        await node.restart(1_500);
        const seconds = ((performance.now() - startedAt) / 1_000).toFixed(1);
        return `private RabbitMQ node stopped (SIGTERM) and back in ${seconds} s`;
      },
    }),
    async queueDepths() {
      const columns = ['name', 'messages', 'messages_ready', 'messages_unacknowledged'];
      const { stdout } = await ctl('list_queues', '-q', '-p', vhost, ...columns);
      const rows = stdout
        .split('\n')
        .map((line) => line.trim().split(/\s+/))
        .filter((row) => row.length === 4 && row[0] !== 'name')
        .map(([name, total, ready, unacked]) => ({
          name: name as string,
          ready: Number(ready),
          unacked: Number(unacked),
          // A quorum queue's at-least-once dead letters count in `messages` only (neither ready
          // nor unacked) until the queue has forwarded them: a retry copy stuck on its way back
          // from a tier queue would show here and nowhere else.
          deadLettered: Number(total) - Number(ready) - Number(unacked),
        }));
      const held = rows.filter((row) => row.ready + row.unacked + row.deadLettered > 0);
      if (held.length === 0) return `every queue of the run is empty (${rows.length} queues)`;
      return held
        .map(
          (row) =>
            `${row.name}: ${row.ready} ready, ${row.unacked} unacked` +
            (row.deadLettered > 0 ? `, ${row.deadLettered} dead-lettered not yet forwarded` : ''),
        )
        .join('; ');
    },
    async close() {
      await transport.close().catch(() => undefined);
      await raw?.close().catch(() => undefined);
      await ctl('delete_vhost', vhost).catch(() => undefined);
    },
  };
}

async function kafkaKit(runId: string, brokers: string[]): Promise<BrokerKit> {
  const source = `idemq-chaos-${runId}`;
  const client = new Kafka({ brokers, clientId: 'idemq-chaos-admin', logLevel: logLevel.NOTHING });
  const admin = client.admin();
  await admin.connect();
  const topics = [source, `${source}.dlq`];
  await createTopics(admin, topics);
  const spec: TransportSpec = { kind: 'kafka', brokers };
  const { transport } = openTransport(spec);
  const producer = client.producer();
  let producerReady: Promise<void> | undefined;
  return {
    name: 'kafka',
    spec,
    source,
    deadLetterSource: `${source}.dlq`,
    transport,
    async publishBad(kind) {
      producerReady ??= producer.connect();
      await producerReady;
      const headers: Record<string, Buffer | string> = {};
      if (kind === 'empty-id') headers['x-idemq-request-id'] = '';
      if (kind === 'oversized-id') headers['x-idemq-request-id'] = OVERSIZED_ID;
      if (kind === 'non-utf8-id') headers['x-idemq-request-id'] = Buffer.from(NON_UTF8_ID);
      if (kind.endsWith('-body')) headers['x-idemq-request-id'] = randomUUID();
      await producer.send({
        topic: source,
        acks: -1,
        messages: [{ value: Buffer.from(badBody(kind)), headers }],
      });
    },
    async breakConnections(pool) {
      const sockets = await pool.cutConnections();
      return `${F04_METHOD.kafka} (${sockets} sockets)`;
    },
    async close() {
      await transport.close().catch(() => undefined);
      if (producerReady) await producer.disconnect().catch(() => undefined);
      const existing = await admin.listTopics();
      const ours = existing.filter((topic) => topic.startsWith(source));
      await admin.deleteTopics({ topics: ours }).catch(() => undefined);
      await admin.disconnect();
    },
  };
}

async function sqsKit(runId: string, endpoint: string, region: string): Promise<BrokerKit> {
  const source = `idemq-chaos-${runId}`;
  const clientConfig = {
    endpoint,
    region,
    credentials: { accessKeyId: 'chaos', secretAccessKey: 'chaos' },
  };
  const admin = new SQSClient(clientConfig);
  // No RedrivePolicy: the engine dead-letters (with reason and attempts), not SQS's receive count,
  // which SIGKILLed receives would inflate.
  const declared = await declareQueue(admin, source, {
    visibilityTimeoutMs: 3_000,
    deadLetter: { name: `${source}-dlq` },
  });
  const target = new URL(endpoint);
  const proxy = await TcpProxy.start(target.hostname, Number(target.port || 80));
  const spec: TransportSpec = {
    kind: 'sqs',
    endpoint: `${target.protocol}//127.0.0.1:${proxy.port}`,
    region,
  };
  const { transport } = openTransport({ kind: 'sqs', endpoint, region });
  const text = (value: string) => ({ DataType: 'String', StringValue: value });
  return {
    name: 'sqs',
    spec,
    source,
    deadLetterSource: `${source}-dlq`,
    transport,
    async publishBad(kind) {
      const attributes: Record<string, MessageAttributeValue> = {};
      if (kind === 'empty-id') attributes[MessageAttributeNames.requestId] = text(' ');
      if (kind === 'oversized-id') {
        attributes[MessageAttributeNames.requestId] = text(OVERSIZED_ID);
      }
      // SQS string attributes must be valid Unicode: non-UTF-8 id bytes can only travel as a
      // Binary attribute, which the transport does not read as an id.
      if (kind === 'non-utf8-id') {
        attributes[MessageAttributeNames.requestId] = {
          DataType: 'Binary',
          BinaryValue: NON_UTF8_ID,
        };
      }
      let body = new TextDecoder().decode(badBody(kind));
      if (kind.endsWith('-body')) attributes[MessageAttributeNames.requestId] = text(randomUUID());
      if (kind === 'non-utf8-body') {
        attributes[MessageAttributeNames.bodyEncoding] = text('base64');
        body = Buffer.from(NON_UTF8_BODY).toString('base64');
      }
      await admin.send(
        new SendMessageCommand({
          QueueUrl: declared.url,
          MessageBody: body,
          MessageAttributes: attributes,
        }),
      );
    },
    async breakConnections() {
      proxy.cut(2_000);
      return F04_METHOD.sqs;
    },
    async close() {
      await transport.close().catch(() => undefined);
      await proxy.close();
      for (const url of [declared.url, declared.deadLetterUrl]) {
        if (url) await deleteQueue(admin, url).catch(() => undefined);
      }
      admin.destroy();
    },
  };
}

/**
 * Creates the run's topics and waits until every partition has a leader. A busy broker may
 * answer the metadata request right after creation with UNKNOWN_TOPIC_OR_PARTITION, which
 * kafkajs's `waitForLeaders` does not retry: poll the metadata ourselves.
 */
async function createTopics(admin: Admin, topics: string[]): Promise<void> {
  await admin
    .createTopics({ topics: topics.map((topic) => ({ topic, numPartitions: 8 })) })
    .catch(() => undefined);
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const { topics: found } = await admin.fetchTopicMetadata({ topics });
      const led = found.every(
        (t) => t.partitions.length === 8 && t.partitions.every((p) => p.leader >= 0),
      );
      if (found.length === topics.length && led) return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
    if (Date.now() > deadline) throw new Error(`topics ${topics.join(', ')} have no leaders`);
    await sleep(250);
  }
}

function badBody(kind: BadInputKind): Uint8Array {
  if (kind === 'malformed-json-body') return new TextEncoder().encode(MALFORMED_JSON);
  if (kind === 'non-utf8-body') return NON_UTF8_BODY;
  return new TextEncoder().encode('{"n":0}');
}
