import { HandRolledGuard } from './handRolled.js';
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
      if (init.consumer === 'raw') return RawAmqpConsumer.open(init);
      if (init.consumer === 'hand') return RawAmqpConsumer.open(init, HandRolledGuard.open(init));
      return IdemqConsumer.open(init, idemqTransport(init));
    }
    case 'kafka': {
      const { RawKafkaConsumer, idemqTransport } = await import('./kafka/consumer.js');
      if (init.consumer === 'raw') return RawKafkaConsumer.open(init);
      if (init.consumer === 'hand') return RawKafkaConsumer.open(init, HandRolledGuard.open(init));
      return IdemqConsumer.open(init, idemqTransport(init));
    }
    case 'sqs': {
      const { RawSqsConsumer, idemqTransport } = await import('./sqs/consumer.js');
      if (init.consumer === 'raw') return RawSqsConsumer.open(init);
      if (init.consumer === 'hand') return RawSqsConsumer.open(init, HandRolledGuard.open(init));
      return IdemqConsumer.open(init, idemqTransport(init));
    }
  }
}
