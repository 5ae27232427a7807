import { childSession } from '../childSession.js';
import { openConsumer } from './consumers.js';
import type { ConsumerSession } from './idemqConsumer.js';
import type { ConsumeRequest, ConsumeResult, ConsumerEnd, ConsumerInit } from './types.js';

/** Runs the consumer in this process (tests; RSS and CPU are then shared). */
export function openConsumerInline(init: ConsumerInit): Promise<ConsumerSession> {
  return openConsumer(init);
}

/**
 * Runs the consumer in a child process of its own (worker.ts), as the store bench does: its CPU
 * time and peak RSS are its own, and it shares no event loop with the parent, which fills the
 * sources.
 */
export function openConsumerChild(init: ConsumerInit): Promise<ConsumerSession> {
  return childSession<ConsumerInit, ConsumeRequest, ConsumeResult, ConsumerEnd>(
    new URL('./worker.js', import.meta.url),
    init,
  );
}
