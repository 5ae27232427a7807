/**
 * How many times a run may execute its handlers beyond once per message, derived from what the
 * scenario does: a fault can interrupt the handlers it catches in flight, and each of those runs
 * once more; nothing else may run a handler twice. A store that takes over live leases passes
 * every other invariant (the fenced ledger absorbs its replays) and fails this one.
 */
import type { FaultKind } from './faults.js';

/** Whose in-flight handlers one fault can interrupt. */
export type FaultReach = 'oneConsumer' | 'everyConsumer';

export interface ExecutionBound {
  /** For each fault kind, whose in-flight handlers one such fault can interrupt. */
  reach: Readonly<Record<FaultKind, FaultReach>>;
  /** Re-executions each healthy id may have without any fault (a planned lease takeover). */
  perId: number;
}

/**
 * The bound of every scenario but F05 without heartbeat: a SIGKILL interrupts the killed
 * consumer's handlers; a store restart fails every consumer's completions in flight; a broker
 * connection cut (on the memory transport: every consumer crashed and replaced) reaches every
 * consumer, and so does a broker restart. Without faults: executions = completions.
 */
export const FAULT_BOUND: ExecutionBound = {
  reach: {
    kill: 'oneConsumer',
    storeRestart: 'everyConsumer',
    storeKill: 'everyConsumer',
    brokerBreak: 'everyConsumer',
    brokerRestart: 'everyConsumer',
  },
  perId: 0,
};

/** The re-executions a run may have, and what the number is made of. */
export interface ReExecutionAllowance {
  allowed: number;
  /** E.g. `3 kill × 10 (one consumer's handlers)`, or `none: no fault injected`. */
  basis: string;
}

export interface BoundInputs {
  consumers: number;
  /** Handlers one consumer runs at once. */
  concurrency: number;
  /** Faults actually injected, by kind. */
  faults: Readonly<Record<FaultKind, number>>;
  healthyIds: number;
}

export function allowedReExecutions(
  bound: ExecutionBound,
  inputs: BoundInputs,
): ReExecutionAllowance {
  const handlers: Record<FaultReach, number> = {
    oneConsumer: inputs.concurrency,
    everyConsumer: inputs.consumers * inputs.concurrency,
  };
  const reachText: Record<FaultReach, string> = {
    oneConsumer: "one consumer's handlers",
    everyConsumer: "every consumer's handlers",
  };
  let allowed = 0;
  const parts: string[] = [];
  for (const kind of Object.keys(bound.reach) as FaultKind[]) {
    const count = inputs.faults[kind];
    if (count === 0) continue;
    const reach = bound.reach[kind];
    allowed += count * handlers[reach];
    parts.push(`${count} ${kind} × ${handlers[reach]} (${reachText[reach]})`);
  }
  if (bound.perId > 0) {
    allowed += bound.perId * inputs.healthyIds;
    parts.push(`${inputs.healthyIds} ids × ${bound.perId} (planned takeover)`);
  }
  return { allowed, basis: parts.length > 0 ? parts.join(' + ') : 'none: no fault injected' };
}
