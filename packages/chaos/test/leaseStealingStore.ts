/**
 * A deliberately broken store for a negative control: core's memory store, except that `claim`
 * takes a record over once even while its owner's lease is live (new owner and fencing token, so
 * the old owner's `complete` is still refused). Completions stay unique and the fenced ledger
 * absorbs the replays; only the execution bound can tell it from a correct store. (A thief without
 * the once-per-record limit keeps a record's copies taking it from each other and leaves ids
 * uncompleted: the other invariants catch that one.)
 */
import {
  type ClaimOutcome,
  type ClaimRequest,
  memoryStore,
  monotonicClock,
  type Store,
} from '@idemq/core';

export interface LeaseStealingStore {
  /** A client for one consumer; its `close()` leaves the shared records alone. */
  open(): Store;
  /** Takeovers of a live lease so far. */
  readonly steals: number;
  close(): Promise<void>;
}

export function leaseStealingStore(): LeaseStealingStore {
  // Store time runs ahead by this much for the one claim that steals (the store reads its clock
  // as the call starts), so that claim alone sees the owner's lease as lapsed.
  let skewMs = 0;
  let steals = 0;
  const stolen = new Set<string>();
  const inner = memoryStore({ clock: { now: () => monotonicClock.now() + skewMs } });
  const claim = async (request: ClaimRequest): Promise<ClaimOutcome> => {
    const outcome = await inner.claim(request);
    const key = `${request.scope}\u0000${request.requestId}`;
    if (outcome.status !== 'in-progress' || stolen.has(key)) return outcome;
    stolen.add(key);
    steals++;
    skewMs = outcome.retryAfterMs + 1;
    const theft = inner.claim(request);
    skewMs = 0;
    return theft;
  };
  return {
    open: () => ({
      ...inner,
      claim,
      claimMany: async (requests) => {
        const outcomes: ClaimOutcome[] = [];
        for (const request of requests) outcomes.push(await claim(request));
        return outcomes;
      },
      close: async () => undefined,
    }),
    get steals() {
      return steals;
    },
    close: () => inner.close(),
  };
}
