import { randomUUID } from 'node:crypto';
import { serviceUrls } from '@idemq/services';
import { type Admin, Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

describe('Kafka', () => {
  const kafka = new Kafka({
    clientId: 'idemq-smoke',
    brokers: serviceUrls().kafkaBrokers,
    logLevel: logLevel.WARN,
  });
  let admin: Admin;

  beforeAll(async () => {
    admin = kafka.admin();
    await admin.connect();
  });
  afterAll(async () => {
    await admin.disconnect();
  });

  it('answers a metadata request', async () => {
    const cluster = await admin.describeCluster();
    expect(cluster.brokers.length).toBeGreaterThan(0);
    expect(cluster.clusterId).toMatch(/^[\w-]{22}$/);
  });

  it('produces to a fresh topic and consumes it through a consumer group', async () => {
    const topic = `idemq-smoke-${randomUUID()}`;
    const groupId = `idemq-smoke-group-${randomUUID()}`;
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });

    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    await producer.send({
      topic,
      messages: [1, 2, 3].map((n) => ({ key: `k${n}`, value: `message ${n}` })),
    });
    await producer.disconnect();

    const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 1000 });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const values: string[] = [];
    const allReceived = new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: async ({ message }) => {
          values.push(message.value?.toString() ?? '');
          if (values.length === 3) resolve();
        },
      });
    });
    await allReceived;
    // Stopping commits the group's offsets.
    await consumer.disconnect();

    expect(values).toEqual(['message 1', 'message 2', 'message 3']);
    const [offsets] = await admin.fetchOffsets({ groupId, topics: [topic] });
    expect(offsets?.partitions).toEqual([expect.objectContaining({ partition: 0, offset: '3' })]);

    await admin.deleteGroups([groupId]);
    await admin.deleteTopics({ topics: [topic] });
  });
});
