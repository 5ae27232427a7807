import type { ScriptName } from './scripts.js';

/**
 * The arguments every key of one script call shares (TTLs, lease length), interned: one object
 * per distinct set, so operations that carry the same one share a coalescing lane and a call.
 */
export interface SharedArgs {
  /** The script and the values: the lane of every operation carrying this set. */
  readonly id: string;
  readonly values: readonly string[];
}

/** More distinct sets than settings ever produce: past it the table starts afresh. */
const MAX_INTERNED = 1_024;

/**
 * Interns a script's shared arguments by up to two inputs, found with two map lookups rather
 * than a string built per operation.
 */
export class SharedArgsTable<A extends string | number, B extends string | number = ''> {
  private readonly byFirst = new Map<A, Map<B, SharedArgs>>();
  private count = 0;

  constructor(
    private readonly script: ScriptName,
    private readonly build: (a: A, b: B) => string[],
  ) {}

  get(a: A, b = '' as B): SharedArgs {
    let byB = this.byFirst.get(a);
    const found = byB?.get(b);
    if (found) return found;
    if (this.count >= MAX_INTERNED) {
      this.byFirst.clear();
      this.count = 0;
      byB = undefined;
    }
    if (!byB) {
      byB = new Map();
      this.byFirst.set(a, byB);
    }
    const values = this.build(a, b);
    const shared = { id: [this.script, ...values].join('/'), values };
    byB.set(b, shared);
    this.count += 1;
    return shared;
  }
}
