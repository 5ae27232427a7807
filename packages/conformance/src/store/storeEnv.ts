import type { ClaimedOutcome, ClaimOutcome, ClaimRequest, RecordId, Store } from '@idemq/core';
import { expect } from 'vitest';
import type { ResolvedStoreTiming, StoreHarness } from '../harness.js';
import { uniqueName } from '../names.js';
import { Resources } from '../resources.js';
import type { CaseEnv } from '../suite.js';

/** Long enough that no store case sees it lapse unless it waits for that on purpose. */
export const LONG_MS = 60_000;

/** One store case's environment: a unique scope and the stores it opened. */
export class StoreEnv implements CaseEnv {
  readonly scope = uniqueName('scope');
  private readonly resources = new Resources();
  private nextId = 0;

  constructor(
    readonly harness: StoreHarness,
    readonly timing: ResolvedStoreTiming,
  ) {}

  /** A new store from the harness, closed when the case ends. */
  async store(): Promise<Store> {
    const store = await this.harness.createStore();
    this.resources.defer('store', () => store.close());
    return store;
  }

  /** A record id in this case's scope. */
  id(label = 'req'): RecordId {
    this.nextId += 1;
    return { scope: this.scope, requestId: `${label}-${this.nextId}` };
  }

  /** A claim request with a long lease unless told otherwise. */
  claimRequest(id: RecordId, overrides: Partial<ClaimRequest> = {}): ClaimRequest {
    return { ...id, leaseMs: LONG_MS, retainMs: LONG_MS, ...overrides };
  }

  /** Registers a cleanup step. */
  defer(what: string, close: () => unknown): void {
    this.resources.defer(what, close);
  }

  dispose(): Promise<void> {
    return this.resources.dispose();
  }
}

/** Asserts `outcome` is `claimed` and narrows it. */
export function expectClaimed(outcome: ClaimOutcome): ClaimedOutcome {
  expect(outcome.status, `expected a claim, got ${JSON.stringify(outcome)}`).toBe('claimed');
  if (outcome.status !== 'claimed') throw new Error('unreachable');
  return outcome;
}
