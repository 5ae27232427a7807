import { HandRolledGuard, type RawGuard } from './handRolled.js';
import { type ConsumerSession, IdemqConsumer } from './idemqConsumer.js';
import { StoreGuard } from './storeGuard.js';
import { type ConsumerInit, isIdemqConsumer } from './types.js';

/**
 * Opens the session `init` names. Each transport's module (its client library) is loaded only
 * when a session runs on it.
 */
export async function openConsumer(init: ConsumerInit): Promise<ConsumerSession> {
  switch (init.transport) {
    case 'rabbitmq': {
      const { RawAmqpConsumer, idemqTransport } = await import('./rabbitmq/consumer.js');
      if (isIdemqConsumer(init.consumer)) return IdemqConsumer.open(init, idemqTransport(init));
      return RawAmqpConsumer.open(init, guardOf(init));
    }
    case 'kafka': {
      const { RawKafkaConsumer, idemqTransport } = await import('./kafka/consumer.js');
      if (isIdemqConsumer(init.consumer)) return IdemqConsumer.open(init, idemqTransport(init));
      return RawKafkaConsumer.open(init, guardOf(init));
    }
    case 'sqs': {
      const { RawSqsConsumer, idemqTransport } = await import('./sqs/consumer.js');
      if (isIdemqConsumer(init.consumer)) return IdemqConsumer.open(init, idemqTransport(init));
      return RawSqsConsumer.open(init, guardOf(init));
    }
  }
}

/** What wraps a raw consumer's handler: nothing (raw), hand-written SET NX, or idemq's store. */
function guardOf(init: ConsumerInit): RawGuard | undefined {
  switch (init.consumer) {
    case 'hand':
      return HandRolledGuard.open(init);
    case 'store':
      return StoreGuard.open(init, { completes: true });
    case 'claim':
      return StoreGuard.open(init, { completes: false });
    default:
      return undefined;
  }
}
