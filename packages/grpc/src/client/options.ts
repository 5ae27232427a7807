import { status } from '@grpc/grpc-js';
import { uuidv7 } from '@idemq/core';
import { OptionsCheck } from '@idemq/core/adapter';
import { isKeyMetadataName } from '../metadataName.js';

export interface IdempotencyClientOptions {
  /** The request metadata entry carrying the key: the server interceptor's `metadataKey`. @default 'idempotency-key' */
  metadataKey?: string;
  /** Makes the key of a call whose metadata carries none. @default uuidv7 */
  newKey?: () => string;
  /** Attempts per logical call, the first included. @default 5 */
  maxAttempts?: number;
  /**
   * Final statuses that start another attempt; `[]` leaves retrying to grpc-js's retry policy.
   * @default [status.ABORTED, status.UNAVAILABLE]
   */
  retryOn?: readonly number[];
  /** Bound of the first backoff, when the server advises no delay. @default 100 */
  baseDelayMs?: number;
  /** Cap of the backoff. A delay the server advises is honoured as it is. @default 5000 */
  maxDelayMs?: number;
}

export const IDEMPOTENCY_CLIENT_DEFAULTS = Object.freeze({
  metadataKey: 'idempotency-key',
  maxAttempts: 5,
  retryOn: Object.freeze([status.ABORTED, status.UNAVAILABLE]) as readonly number[],
  baseDelayMs: 100,
  maxDelayMs: 5_000,
});

/** The options with every default filled in. */
export interface ClientSettings {
  metadataKey: string;
  newKey: () => string;
  maxAttempts: number;
  retryOn: ReadonlySet<number>;
  baseDelayMs: number;
  maxDelayMs: number;
}

const ONE_DAY_MS = 86_400_000;
const HIGHEST_STATUS_CODE = status.UNAUTHENTICATED;

/** Checks every option (one `InvalidOptionsError` listing all problems) and fills defaults. */
export function resolveClientSettings(options: IdempotencyClientOptions = {}): ClientSettings {
  const check = new OptionsCheck('idempotencyClientInterceptor');
  if (typeof options !== 'object' || options === null) {
    check.expect(false, 'options must be an object').done();
  }
  check
    .expect(
      options.metadataKey === undefined || isKeyMetadataName(options.metadataKey),
      `metadataKey must be a lower-case text metadata name outside grpc-*, got ${JSON.stringify(options.metadataKey)}`,
    )
    .fn('newKey', options.newKey, true)
    .integer('maxAttempts', options.maxAttempts, 1, 100)
    .expect(
      options.retryOn === undefined ||
        (Array.isArray(options.retryOn) &&
          options.retryOn.every(
            (code) => Number.isInteger(code) && code > status.OK && code <= HIGHEST_STATUS_CODE,
          )),
      `retryOn must be an array of gRPC status codes from 1 to ${HIGHEST_STATUS_CODE}`,
    )
    .integer('baseDelayMs', options.baseDelayMs, 0, ONE_DAY_MS)
    .integer('maxDelayMs', options.maxDelayMs, 0, ONE_DAY_MS)
    .done();

  const d = IDEMPOTENCY_CLIENT_DEFAULTS;
  return {
    metadataKey: options.metadataKey ?? d.metadataKey,
    newKey: options.newKey ?? (() => uuidv7()),
    maxAttempts: options.maxAttempts ?? d.maxAttempts,
    retryOn: new Set(options.retryOn ?? d.retryOn),
    baseDelayMs: options.baseDelayMs ?? d.baseDelayMs,
    maxDelayMs: options.maxDelayMs ?? d.maxDelayMs,
  };
}
