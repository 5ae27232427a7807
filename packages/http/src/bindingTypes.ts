/**
 * The centre's interface as the framework bindings use it. These mirror the centre's own types
 * (see the package's main entry); the bindings depend on nothing more than this.
 */

/** What a route sees about the idempotent run it is part of. */
export interface HttpContext {
  /** The request's key; `undefined` when the request passed through. */
  idempotencyKey: string | undefined;
  fencingToken: number | undefined;
  attempt: number | undefined;
  /** Aborted when the lease is lost (never by a client disconnect). */
  signal: AbortSignal;
}

/** Runs the route for `request` and resolves with the Response it produced. */
export type HttpNext = (request: Request, ctx: HttpContext) => Promise<Response>;

/** The framework-free centre: takes a WHATWG Request, returns the Response to send. */
export interface HttpIdempotency {
  handle(request: Request, next: HttpNext): Promise<Response>;
}
