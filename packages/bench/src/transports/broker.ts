import type { Endpoints, TransportName, TransportSettings } from './types.js';

/** One message as the bench publishes it, on any transport. */
export interface QueuedMessage {
  requestId: string;
  /** Small JSON body (about 60 bytes). */
  body: string;
}

/** `count` messages with unique requestIds under `prefix`, and small JSON bodies. */
export function makeMessages(prefix: string, count: number): QueuedMessage[] {
  const messages: QueuedMessage[] = [];
  for (let i = 0; i < count; i++) {
    messages.push({
      requestId: `${prefix}:${i}`,
      body: JSON.stringify({ orderId: i, amountCents: 1999 + (i % 100), currency: 'EUR' }),
    });
  }
  return messages;
}

/** What the broker held for one source after its round. */
export interface SourceState {
  /** Messages not consumed (RabbitMQ/SQS: still in the queue; Kafka: the group's lag). */
  left: number;
  /** Messages in the source's dead-letter queue or topic. */
  deadLetters: number;
}

/**
 * The bench's side of a broker: creates each round's source (queue or topic) as the transport
 * expects it, fills it before the measured interval, inspects it afterwards and deletes
 * everything the round created. Nothing here is measured.
 */
export interface BenchBroker {
  /** The broker and its version, for the report (e.g. "RabbitMQ 3.10.8"). */
  readonly description: string;
  /** Creates `source` and publishes `messages` to it, waiting until the broker holds them all. */
  fill(source: string, messages: readonly QueuedMessage[]): Promise<void>;
  inspect(source: string): Promise<SourceState>;
  /** Deletes what was created for `source` (a missing one is no error); returns messages dropped. */
  remove(source: string): Promise<number>;
  /** Completes removals deferred until no consumer uses the sources (Kafka's topics). */
  settle(): Promise<void>;
  /** Those of `sources` of which anything still exists on the broker. */
  existing(sources: readonly string[]): Promise<string[]>;
  /** Removes whatever is still created, then disconnects. */
  close(): Promise<void>;
}

/** Connects the bench's admin side of `transport`; its client library is loaded only then. */
export async function openBroker(
  transport: TransportName,
  endpoints: Endpoints,
  settings: TransportSettings,
): Promise<BenchBroker> {
  switch (transport) {
    case 'rabbitmq': {
      const { RabbitmqBroker } = await import('./rabbitmq/broker.js');
      return RabbitmqBroker.open(endpoints.amqpUrl, settings.queueType);
    }
    case 'kafka': {
      const { KafkaBroker } = await import('./kafka/broker.js');
      return KafkaBroker.open(endpoints.kafkaBrokers, settings.partitions);
    }
    case 'sqs': {
      const { SqsBroker } = await import('./sqs/broker.js');
      return SqsBroker.open(endpoints);
    }
  }
}
