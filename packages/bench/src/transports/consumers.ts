import { type ConsumerSession, IdemqConsumer } from './idemqConsumer.js';
import type { ConsumerInit } from './types.js';

/**
 * Opens the session `init` names. Each transport's module (its client library) is loaded only
 * when a session runs on it.
 */
export async function openConsumer(init: ConsumerInit): Promise<ConsumerSession> {
  switch (init.transport) {
    case 'rabbitmq': {
      const { RawAmqpConsumer, idemqTransport } = await import('./rabbitmq/consumer.js');
      return init.consumer === 'raw'
        ? RawAmqpConsumer.open(init)
        : IdemqConsumer.open(init, idemqTransport(init));
    }
    case 'kafka': {
      const { RawKafkaConsumer, idemqTransport } = await import('./kafka/consumer.js');
      return init.consumer === 'raw'
        ? RawKafkaConsumer.open(init)
        : IdemqConsumer.open(init, idemqTransport(init));
    }
    case 'sqs': {
      const { RawSqsConsumer, idemqTransport } = await import('./sqs/consumer.js');
      return init.consumer === 'raw'
        ? RawSqsConsumer.open(init)
        : IdemqConsumer.open(init, idemqTransport(init));
    }
  }
}
