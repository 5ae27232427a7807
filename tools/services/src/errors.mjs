// @ts-check
// One error type for "a service could not be provided", carrying what to do about it.

export class ServiceError extends Error {
  /**
   * @param {string} service  which service failed (or "services" for several)
   * @param {string} message  what went wrong
   * @param {{ hint?: string, cause?: unknown }} [extra] hint: what to install or run to fix it
   */
  constructor(service, message, extra = {}) {
    super(extra.hint ? `${message}\n  Fix: ${extra.hint}` : message, { cause: extra.cause });
    this.name = 'ServiceError';
    this.service = service;
    this.hint = extra.hint;
  }
}

/**
 * Message of anything thrown, for logs.
 * @param {unknown} error
 * @returns {string}
 */
export function errorMessage(error) {
  if (error instanceof AggregateError && error.errors.length > 0) {
    return error.errors.map(errorMessage).join('; ');
  }
  if (error instanceof Error) {
    const message = error.message || error.name;
    // fetch() hides the reason (e.g. ECONNREFUSED) in `cause`.
    return error.cause instanceof Error ? `${message} (${errorMessage(error.cause)})` : message;
  }
  return String(error);
}
