/**
 * The order in which a run's faults are injected, one per tick: a finite list for a bounded run
 * (its kinds interleaved, so each lands while handlers run), or an endless rotation for a soak.
 */
export type FaultKind = 'kill' | 'storeRestart' | 'brokerBreak';

export interface FaultPlan {
  kills: number;
  storeRestarts: number;
  brokerBreaks: number;
  /** Endless: repeat this rotation until the run settles (the counts above are then ignored). */
  rotation?: readonly FaultKind[];
}

export interface FaultSequence {
  /** The next fault, or undefined when a finite plan is exhausted. */
  next(): FaultKind | undefined;
  /** Faults in a finite plan; `Infinity` for a rotation. */
  readonly total: number;
}

export function faultSequence(plan: FaultPlan): FaultSequence {
  const rotation = plan.rotation;
  if (rotation && rotation.length > 0) {
    let index = 0;
    return { total: Number.POSITIVE_INFINITY, next: () => rotation[index++ % rotation.length] };
  }
  const order: FaultKind[] = [];
  const rounds = Math.max(plan.kills, plan.storeRestarts, plan.brokerBreaks);
  for (let round = 0; round < rounds; round++) {
    if (round < plan.kills) order.push('kill');
    if (round < plan.storeRestarts) order.push('storeRestart');
    if (round < plan.brokerBreaks) order.push('brokerBreak');
  }
  let index = 0;
  return { total: order.length, next: () => order[index++] };
}
