import { ErrorCodes, IdemqError, PublishFailedError, TransportUnavailableError } from '@idemq/core';

/** Core's, so that one check catches them from every adapter. */
export { PublishFailedError, TransportUnavailableError };

/** The SQS limit on visibility: 12 hours from a message's receive (API_ChangeMessageVisibility). */
export const MAX_VISIBILITY_MS = 12 * 60 * 60 * 1000;

/**
 * `retry({ delayMs })` asked for more than SQS can hold a message invisible: 12 hours counted
 * from the receive. Nothing was changed: the delivery is still unsettled.
 */
export class DelayTooLongError extends IdemqError {
  readonly delayMs: number;
  /** The longest delay this delivery could still be given. */
  readonly maxDelayMs: number;
  constructor(delayMs: number, maxDelayMs: number) {
    super(
      ErrorCodes.DELAY_TOO_LONG,
      `A retry delay of ${delayMs} ms is over what SQS allows for this message (${maxDelayMs} ms: visibility ends at most 12 h after the receive)`,
    );
    this.delayMs = delayMs;
    this.maxDelayMs = maxDelayMs;
  }
}

/**
 * A message is larger than the queue accepts (body plus message attributes, as SQS counts it).
 * Raised before anything is sent; not retriable. Core's `PublishFailedError` (`too-large`), with
 * the sizes.
 */
export class PayloadTooLargeError extends PublishFailedError {
  readonly bytes: number;
  readonly maxBytes: number;
  constructor(destination: string, bytes: number, maxBytes: number, requestId?: string) {
    super(
      `Message for ${destination} is ${bytes} bytes (body and attributes), over the ${maxBytes}-byte limit`,
      { failure: 'too-large', destination, ...(requestId === undefined ? {} : { requestId }) },
    );
    this.bytes = bytes;
    this.maxBytes = maxBytes;
  }
}

/** Error names with which SQS says a receipt handle no longer designates an in-flight message. */
const RECEIPT_GONE = new Set(['ReceiptHandleIsInvalid', 'MessageNotInflight']);

/**
 * True when SQS refused a receipt handle because the message is no longer ours: deleted, or
 * received again elsewhere after its visibility lapsed. AWS says the latter with
 * `InvalidParameterValue` ("…ReceiptHandle is invalid. Reason: Message does not exist or is not
 * available for visibility timeout change").
 */
export function isReceiptGone(codeOrError: unknown): boolean {
  const name = errorName(codeOrError);
  if (name === undefined) return false;
  if (RECEIPT_GONE.has(name)) return true;
  return (
    name === 'InvalidParameterValue' &&
    codeOrError instanceof Error &&
    /receipt ?handle/i.test(codeOrError.message)
  );
}

/** Failures retrying cannot cure: a missing queue, refused credentials or permissions. */
const FATAL = new Set([
  'QueueDoesNotExist',
  'AWS.SimpleQueueService.NonExistentQueue',
  'AccessDenied',
  'AccessDeniedException',
  'InvalidSecurity',
  'InvalidClientTokenId',
  'UnrecognizedClientException',
  'SignatureDoesNotMatch',
  'InvalidAddress',
  'CredentialsProviderError',
]);

/** True when a receive loop should give up and report instead of backing off and polling again. */
export function isFatal(error: unknown): boolean {
  const name = errorName(error);
  return name !== undefined && FATAL.has(name);
}

/**
 * Whether an SDK error may go away by itself: server faults, throttling and network failures
 * (which carry no `$fault`), but not what the request itself got wrong.
 */
export function isTransient(error: unknown): boolean {
  if (isFatal(error)) return false;
  if (!(error instanceof Error)) return true;
  const { $fault, $retryable } = error as Error & { $fault?: unknown; $retryable?: unknown };
  if ($retryable !== undefined || $fault === 'server' || $fault === undefined) return true;
  return /Throttl|OverLimit|RequestLimitExceeded/i.test(error.name);
}

/** A short description of an SDK error: its name and message, never a URL's credentials. */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.message && error.message !== error.name
    ? `${error.name}: ${error.message}`
    : error.name;
}

function errorName(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value instanceof Error) return value.name;
  return undefined;
}
