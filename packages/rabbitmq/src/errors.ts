import { ErrorCodes, IdemqError, TransportUnavailableError } from '@idemq/core';

/** Core's, so that one check catches it from every adapter. */
export { TransportUnavailableError };

/** Codes of the errors this transport raises (listed in core's `ErrorCodes` and docs/errors.md). */
export const RabbitmqErrorCodes = {
  PUBLISH_FAILED: ErrorCodes.PUBLISH_FAILED,
  TRANSPORT_UNAVAILABLE: ErrorCodes.TRANSPORT_UNAVAILABLE,
} as const;

/** Why a publish was not confirmed. */
export type PublishFailure =
  /** `mandatory` and no queue is bound: the broker returned the message (NO_ROUTE). */
  | 'unroutable'
  /** The broker refused it (`basic.nack`): an internal error on its side. */
  | 'nacked'
  /** The channel or connection died before the confirm and no reconnection came in time. */
  | 'unconfirmed'
  /** Over the size the broker accepts (`maxPayloadBytes`): refused before sending. */
  | 'too-large';

/**
 * A publish the broker did not confirm. `failure` says why; `unroutable` (bind a queue first:
 * start a consumer once, or call `declare()`) and `too-large` are not retriable.
 */
export class PublishFailedError extends IdemqError {
  readonly failure: PublishFailure;
  readonly exchange: string;
  readonly routingKey: string;

  constructor(
    failure: PublishFailure,
    target: { exchange: string; routingKey: string },
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(RabbitmqErrorCodes.PUBLISH_FAILED, message, {
      retriable: failure !== 'unroutable' && failure !== 'too-large',
      cause: options.cause,
    });
    this.failure = failure;
    this.exchange = target.exchange;
    this.routingKey = target.routingKey;
  }
}

/** A short, credential-free description of an amqplib error (code and text). */
export function describeAmqpError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const { code } = error as Error & { code?: unknown };
  return typeof code === 'number' || typeof code === 'string'
    ? `${error.message} (${code})`
    : error.message;
}
