import type { Capabilities, IncomingMessage } from '@idemq/core';
import { expect } from 'vitest';

/**
 * Asserts a raw delivery's attempt as precisely as the transport's counter allows: `exact`
 * equal, `approximate` at least, `none` only that the adapter says its number is emulated.
 * Only for transport-level checks, where the broker's counter is all there is: the handler's
 * attempt comes from the idempotency record, and consumer-level cases assert it exactly.
 */
export function expectAttempt(
  message: IncomingMessage,
  expected: number,
  capabilities: Capabilities,
  what = 'attempt',
): void {
  switch (capabilities.redeliveryCounter) {
    case 'exact':
      expect(message.attemptSource, `${what}: attemptSource`).toBe('exact');
      expect(message.attempt, what).toBe(expected);
      return;
    case 'approximate':
      expect(message.attemptSource, `${what}: attemptSource`).toBe('approximate');
      expect(message.attempt, what).toBeGreaterThanOrEqual(expected);
      return;
    case 'none':
      expect(message.attemptSource, `${what}: attemptSource`).toBe('emulated');
      expect(message.attempt, what).toBeGreaterThanOrEqual(1);
      return;
  }
}

/** Asserts a redelivery's attempt relative to the previous one, counted or not. */
export function expectNextAttempt(
  previous: IncomingMessage,
  next: IncomingMessage,
  counted: boolean,
  capabilities: Capabilities,
  what = 'attempt',
): void {
  expectAttempt(next, previous.attempt + (counted ? 1 : 0), capabilities, what);
}

/** Bytes as a Buffer, so vitest diffs them readably. */
export function bytes(value: Uint8Array | string): Buffer {
  return typeof value === 'string' ? Buffer.from(value, 'utf8') : Buffer.from(value);
}

/** The delay `retry` may be asked for natively (C09 and friends cap theirs at this). */
export function maxNativeDelayMs(capabilities: Capabilities): number {
  return capabilities.nativeDelay === 'emulated'
    ? Number.POSITIVE_INFINITY
    : capabilities.nativeDelay.maxMs;
}
