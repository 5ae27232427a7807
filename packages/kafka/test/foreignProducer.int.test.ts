import { runForeignProducerCase } from '@idemq/conformance';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { describe, it } from 'vitest';
import { CloudEventsHeaders, KafkaHeaders } from '../src/index.js';
import { brokers, closedAfterEach, createTopics, testTransport, topicName } from './helpers.js';

const opened = closedAfterEach();

describe('a producer that is not idemq (kafkajs, CloudEvents binary mode)', () => {
  it('each event runs once, copies are skipped, bodies decode by content type', async () => {
    const topic = topicName('foreign');
    await createTopics([topic, `${topic}.dlq`]);
    const transport = testTransport();
    opened.push(transport);
    const producer = new Kafka({
      clientId: 'not-idemq',
      brokers,
      logLevel: logLevel.NOTHING,
    }).producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    opened.push({ close: () => producer.disconnect() });
    await runForeignProducerCase({
      transport,
      source: topic,
      timeoutMs: 30_000,
      publish: async (events) => {
        await producer.send({
          topic,
          acks: -1,
          messages: events.map((event) => ({
            value: event.body,
            headers: {
              [CloudEventsHeaders.id]: event.id,
              [CloudEventsHeaders.source]: event.source,
              ce_specversion: '1.0',
              ce_type: event.type,
              [KafkaHeaders.contentType]: event.contentType,
            },
          })),
        });
      },
    });
  });
});
