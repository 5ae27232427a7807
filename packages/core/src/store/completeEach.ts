import type { CompleteRequest, SettledTransition, TransitionOutcome } from './store.js';

/**
 * `completeMany` made of single completions, issued in request order and settled each: for a
 * store without a batch form of its own, and for store wrappers that change `complete` and must
 * keep batches consistent with it.
 */
export function completeEach(
  complete: (request: CompleteRequest) => Promise<TransitionOutcome>,
  requests: readonly CompleteRequest[],
): Promise<SettledTransition[]> {
  return Promise.all(requests.map((request) => settle(complete(request))));
}

/** A single operation's outcome as a batch element. */
export function settle(operation: Promise<TransitionOutcome>): Promise<SettledTransition> {
  return operation.then(
    (value) => ({ status: 'fulfilled', value }),
    (reason: unknown) => ({
      status: 'rejected',
      reason: reason instanceof Error ? reason : new Error(String(reason)),
    }),
  );
}
