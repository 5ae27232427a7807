/**
 * The order in which a run's faults are injected, one per tick: a finite list for a bounded run
 * (its kinds interleaved, so each lands while handlers run), or an endless rotation for a soak.
 */
export type FaultKind = 'kill' | 'storeRestart' | 'storeKill' | 'brokerBreak' | 'brokerRestart';

export const FAULT_KINDS: readonly FaultKind[] = [
  'kill',
  'storeRestart',
  'storeKill',
  'brokerBreak',
  'brokerRestart',
];

export interface FaultPlan {
  kills: number;
  /** Store stopped with SIGTERM (Redis writes and exits) and started again. */
  storeRestarts: number;
  /** Store SIGKILLed (nothing flushed at exit) and started again. */
  storeKills: number;
  /** Broker connections cut (see `F04_METHOD`). */
  brokerBreaks: number;
  /** The run's private broker stopped and started again (RabbitMQ only). */
  brokerRestarts: number;
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
  const counts: Record<FaultKind, number> = {
    kill: plan.kills,
    storeRestart: plan.storeRestarts,
    storeKill: plan.storeKills,
    brokerBreak: plan.brokerBreaks,
    brokerRestart: plan.brokerRestarts,
  };
  const rounds = Math.max(...Object.values(counts));
  for (let round = 0; round < rounds; round++) {
    for (const kind of FAULT_KINDS) if (round < counts[kind]) order.push(kind);
  }
  let index = 0;
  return { total: order.length, next: () => order[index++] };
}
