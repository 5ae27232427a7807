import {
  ErrorCodes,
  PublishFailedError,
  type PublishFailure,
  TransportUnavailableError,
} from '@idemq/core';

/** Core's, so that one check catches them from every adapter. */
export { PublishFailedError, type PublishFailure, TransportUnavailableError };

/** Codes of the errors this transport raises (listed in core's `ErrorCodes` and docs/errors.md). */
export const RabbitmqErrorCodes = {
  PUBLISH_FAILED: ErrorCodes.PUBLISH_FAILED,
  TRANSPORT_UNAVAILABLE: ErrorCodes.TRANSPORT_UNAVAILABLE,
} as const;

/** A short, credential-free description of an amqplib error (code and text). */
export function describeAmqpError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const { code } = error as Error & { code?: unknown };
  return typeof code === 'number' || typeof code === 'string'
    ? `${error.message} (${code})`
    : error.message;
}
