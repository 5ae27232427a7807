import { runForeignProducerCase } from '@idemq/conformance';
import amqplib from 'amqplib';
import { afterEach, describe, it } from 'vitest';
import { CloudEventsHeaders, rabbitmq } from '../src/index.js';
import { testOptions, uniqueSource } from './harness.js';

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
});

describe('a producer that is not idemq (amqplib, CloudEvents binary mode)', () => {
  it('each event runs once, copies are skipped, bodies decode by content type', async () => {
    const transport = rabbitmq(testOptions('quorum'));
    cleanup.push(() => transport.close());
    const raw = await amqplib.connect(testOptions('quorum').url);
    cleanup.push(() => raw.close());
    const channel = await raw.createConfirmChannel();
    const source = uniqueSource('foreign');
    await runForeignProducerCase({
      transport,
      source,
      publish: async (events) => {
        for (const event of events) {
          // Billing writes the binding's older `cloudEvents:` names; both must be understood.
          const colon = event.source === '/shop/billing';
          const name = (attribute: string) => `cloudEvents${colon ? ':' : '_'}${attribute}`;
          channel.publish(source, '', event.body, {
            contentType: event.contentType,
            persistent: true,
            headers: {
              [colon ? CloudEventsHeaders.colonId : CloudEventsHeaders.id]: event.id,
              [colon ? CloudEventsHeaders.colonSource : CloudEventsHeaders.source]: event.source,
              [name('specversion')]: '1.0',
              [name('type')]: event.type,
            },
          });
        }
        await channel.waitForConfirms();
      },
    });
  });
});
