import { ErrorCodes } from './codes.js';
import { IdemqError } from './idemqError.js';

/**
 * A transport could not give what was asked of it: the broker unreachable, or not answering, in
 * time (retriable), or a queue, topic or permission it lacks (retriable or not, as the adapter
 * says). One class for every adapter, so a caller checks for it once.
 */
export class TransportUnavailableError extends IdemqError {
  constructor(message: string, options: { cause?: unknown; retriable?: boolean } = {}) {
    super(ErrorCodes.TRANSPORT_UNAVAILABLE, message, {
      retriable: options.retriable ?? true,
      cause: options.cause,
    });
  }
}

/** Error raised by operations on a closed transport. */
export class TransportClosedError extends IdemqError {
  constructor(name: string) {
    super(ErrorCodes.TRANSPORT_CLOSED, `The ${name} transport is closed`);
  }
}

/** Why a publish did not go through. */
export type PublishFailure =
  /** Over the size the broker accepts (`maxPayloadBytes`): refused before sending. */
  | 'too-large'
  /** The broker had nowhere to put it (RabbitMQ: no queue bound to the exchange). */
  | 'unroutable'
  /** The broker acknowledged the message negatively (RabbitMQ `basic.nack`). */
  | 'nacked'
  /** No confirm came (channel closed, or none within the timeout): the broker may still have it. */
  | 'unconfirmed'
  /** The broker's API answered the send with an error (SQS `SendMessage`). */
  | 'refused';

/** What a `PublishFailedError` says about the publish. */
export interface PublishFailedDetails {
  failure: PublishFailure;
  /** Where it was published: the topic, exchange or queue name. */
  destination: string;
  /** The message's requestId, when it was known before the failure. */
  requestId?: string;
  /** Defaults by `failure`: `too-large` and `unroutable` are not retriable, the rest are. */
  retriable?: boolean;
  cause?: unknown;
}

const NEVER_RETRIABLE: ReadonlySet<PublishFailure> = new Set(['too-large', 'unroutable']);

/**
 * The broker did not take a publish, whatever the adapter: `failure` says why, `retriable`
 * whether publishing the same message again may work. One class, so a caller checks for it once.
 */
export class PublishFailedError extends IdemqError {
  readonly failure: PublishFailure;
  readonly destination: string;
  readonly requestId: string | undefined;

  constructor(message: string, details: PublishFailedDetails) {
    super(ErrorCodes.PUBLISH_FAILED, message, {
      retriable: details.retriable ?? !NEVER_RETRIABLE.has(details.failure),
      cause: details.cause,
    });
    this.failure = details.failure;
    this.destination = details.destination;
    this.requestId = details.requestId;
  }
}
