/**
 * The invariants of a run, checked from the ledger alone: every healthy id completed exactly once,
 * every poison or bad message dead-lettered with its reason, no handler run without a claim, and
 * no more handler runs than one per message plus what the run's faults can explain.
 */
import type { ReExecutionAllowance } from './executionBound.js';
import type { DeadLetterEntry, LedgerSnapshot } from './ledger.js';

/** What was published, as the checker needs it. */
export interface PublishedPlan {
  /** Ids whose handler succeeds: each must complete exactly once. */
  healthy: readonly string[];
  /** Ids whose handler always throws: each must be dead-lettered after `maxAttempts`. */
  poison: readonly string[];
  /** Copies published without a valid id or body: each must be dead-lettered with a code. */
  badInputs: number;
  maxAttempts: number;
}

export interface AuditReport {
  executions: number;
  /** COMPLETED transitions: those in the ledger plus `completionsSeenOnlyInStore`. */
  completions: number;
  /**
   * Ids COMPLETED in the store whose ledger write died with its process (SIGKILL between the
   * store's reply and the ledger write).
   */
  completionsSeenOnlyInStore: number;
  /** Ids the store completed more than once, or whose effect was applied more than once. */
  completedTwice: string[];
  /** Healthy ids neither completed nor dead-lettered. */
  lost: string[];
  /** Healthy ids found on the dead-letter destination. */
  healthyDeadLettered: string[];
  /** Poison ids not dead-lettered, or dead-lettered without reason or with the wrong attempts. */
  poisonUnaccounted: string[];
  /** Bad inputs published minus dead letters without a valid id (negative: extra dead letters). */
  badInputsUnaccounted: number;
  /** Dead letters by code. */
  deadLetteredByCode: Record<string, number>;
  deadLettered: number;
  unclaimedExecutions: number;
  /** Re-executions that found their effect already applied (absorbed by the fenced write). */
  replayedEffects: number;
  /** Executions minus completions: the at-least-once cost of crashes and lease losses. */
  reExecutions: number;
  /** Handler runs of healthy ids. */
  healthyExecutions: number;
  /** COMPLETED transitions of healthy ids (ledger and store-only). */
  healthyCompletions: number;
  /** Handler runs of poison ids: `maxAttempts` each, never completed. */
  poisonExecutions: number;
  /** Handler runs of ids never published (a bad input must never reach the handler). */
  unplannedExecutions: number;
  /**
   * Runs beyond once per message: healthy executions − healthy completions (held to `allowance`),
   * plus each poison id's runs beyond `maxAttempts` and unplanned runs (both held to 0).
   */
  excessExecutions: number;
  /** The re-executions of healthy ids the run's faults allow. */
  allowance: ReExecutionAllowance;
  /** Each execution bound the run broke, in words; empty when within bounds. */
  boundViolations: string[];
  /** Every invariant held. */
  ok: boolean;
}

/** Whether a poison id's dead letters include one with its reason, code and every attempt. */
function deadLetteredAsPlanned(
  plan: PublishedPlan,
  entries: readonly DeadLetterEntry[] | undefined,
): boolean {
  return (entries ?? []).some((e) => e.reason && e.code && e.attempts === plan.maxAttempts);
}

/** Dead letters sorted by the planned id they carry; the rest (bad inputs) only counted. */
function sortDeadLetters(plan: PublishedPlan, deadLetters: readonly DeadLetterEntry[]) {
  const planned = new Set([...plan.healthy, ...plan.poison]);
  const deadById = new Map<string, DeadLetterEntry[]>();
  let anonymousDead = 0;
  for (const entry of deadLetters) {
    if (entry.requestId === undefined || !planned.has(entry.requestId)) {
      anonymousDead++;
      continue;
    }
    const list = deadById.get(entry.requestId) ?? [];
    list.push(entry);
    deadById.set(entry.requestId, list);
  }
  return { deadById, anonymousDead };
}

/**
 * Dead letters the run still waits for: poison ids not yet dead-lettered as planned, and bad
 * inputs beyond the dead letters without a planned id. A count of dead letters alone would not
 * do: a poison id's duplicate copies may be dead-lettered too, and stand in for another poison
 * id still on its way through the retries.
 */
export function deadLettersOwed(
  plan: PublishedPlan,
  deadLetters: readonly DeadLetterEntry[],
): number {
  const { deadById, anonymousDead } = sortDeadLetters(plan, deadLetters);
  const poisonLeft = plan.poison.filter((id) => !deadLetteredAsPlanned(plan, deadById.get(id)));
  return poisonLeft.length + Math.max(0, plan.badInputs - anonymousDead);
}

/**
 * Checks `snapshot` against `plan`. `completedInStore` says which of the ids passed to it the
 * store holds as COMPLETED: a consumer killed between the store's COMPLETED and the ledger write
 * leaves no completion in the ledger, yet the id is not lost.
 */
export function audit(
  plan: PublishedPlan,
  snapshot: LedgerSnapshot,
  completedInStore: ReadonlySet<string>,
  allowance: ReExecutionAllowance,
): AuditReport {
  const { deadById, anonymousDead } = sortDeadLetters(plan, snapshot.deadLetters);
  const byCode: Record<string, number> = {};
  for (const entry of snapshot.deadLetters) {
    const code = entry.code ?? 'none';
    byCode[code] = (byCode[code] ?? 0) + 1;
  }

  const completedTwice: string[] = [];
  for (const [id, count] of snapshot.completions) if (count > 1) completedTwice.push(id);
  const lost: string[] = [];
  const healthyDeadLettered: string[] = [];
  for (const id of plan.healthy) {
    if (deadById.has(id)) healthyDeadLettered.push(id);
    const completed = (snapshot.completions.get(id) ?? 0) > 0 || completedInStore.has(id);
    if (!snapshot.effects.has(id) || !completed) lost.push(id);
  }
  const poisonUnaccounted: string[] = [];
  for (const id of plan.poison) {
    if (!deadLetteredAsPlanned(plan, deadById.get(id)) || snapshot.effects.has(id)) {
      poisonUnaccounted.push(id);
    }
  }

  let executions = 0;
  for (const count of snapshot.executions.values()) executions += count;
  let completionsSeenOnlyInStore = 0;
  for (const id of completedInStore)
    if (!snapshot.completions.has(id)) completionsSeenOnlyInStore++;
  let completions = completionsSeenOnlyInStore;
  for (const count of snapshot.completions.values()) completions += count;
  let replayedEffects = 0;
  for (const count of snapshot.replays.values()) replayedEffects += count;
  const badInputsUnaccounted = plan.badInputs - anonymousDead;
  const runs = executionsBySort(plan, snapshot, completedInStore);
  const report: AuditReport = {
    executions,
    completions,
    completionsSeenOnlyInStore,
    completedTwice,
    lost,
    healthyDeadLettered,
    poisonUnaccounted,
    badInputsUnaccounted,
    deadLetteredByCode: byCode,
    deadLettered: snapshot.deadLetters.length,
    unclaimedExecutions: snapshot.unclaimedExecutions,
    replayedEffects,
    reExecutions: executions - completions,
    ...runs.counts,
    allowance,
    boundViolations: boundViolations(plan, runs, allowance),
    ok: false,
  };
  report.ok =
    completedTwice.length === 0 &&
    lost.length === 0 &&
    healthyDeadLettered.length === 0 &&
    poisonUnaccounted.length === 0 &&
    badInputsUnaccounted === 0 &&
    report.unclaimedExecutions === 0 &&
    report.boundViolations.length === 0;
  return report;
}

/** Executions sorted into healthy, poison and unplanned ids, and what each sort owes the bound. */
function executionsBySort(
  plan: PublishedPlan,
  snapshot: LedgerSnapshot,
  completedInStore: ReadonlySet<string>,
) {
  const healthy = new Set(plan.healthy);
  const poison = new Set(plan.poison);
  let healthyExecutions = 0;
  let poisonExecutions = 0;
  let unplannedExecutions = 0;
  const poisonOverRun: Array<[string, number]> = [];
  for (const [id, count] of snapshot.executions) {
    if (healthy.has(id)) healthyExecutions += count;
    else if (poison.has(id)) {
      poisonExecutions += count;
      if (count > plan.maxAttempts) poisonOverRun.push([id, count]);
    } else unplannedExecutions += count;
  }
  let healthyCompletions = 0;
  for (const id of plan.healthy) {
    const inLedger = snapshot.completions.get(id) ?? 0;
    healthyCompletions += inLedger > 0 ? inLedger : completedInStore.has(id) ? 1 : 0;
  }
  const healthyReExecutions = healthyExecutions - healthyCompletions;
  const poisonExcess = poisonOverRun.reduce((sum, [, count]) => sum + count - plan.maxAttempts, 0);
  return {
    counts: {
      healthyExecutions,
      healthyCompletions,
      poisonExecutions,
      unplannedExecutions,
      excessExecutions: Math.max(0, healthyReExecutions) + poisonExcess + unplannedExecutions,
    },
    healthyReExecutions,
    poisonOverRun,
  };
}

/** The bounds a run broke, each saying which and by how much. */
function boundViolations(
  plan: PublishedPlan,
  runs: ReturnType<typeof executionsBySort>,
  allowance: ReExecutionAllowance,
): string[] {
  const violations: string[] = [];
  const { counts, healthyReExecutions, poisonOverRun } = runs;
  if (poisonOverRun.length > 0) {
    const sample = poisonOverRun
      .slice(0, 5)
      .map(([id, count]) => `${id} ×${count}`)
      .join(', ');
    violations.push(
      `poison executions: ${poisonOverRun.length} poison ids ran more than maxAttempts ${plan.maxAttempts} times (${sample})`,
    );
  }
  if (counts.unplannedExecutions > 0) {
    violations.push(
      `unplanned executions: ${counts.unplannedExecutions} handler runs of ids never published`,
    );
  }
  if (healthyReExecutions > allowance.allowed) {
    const exact = allowance.allowed === 0 ? ' (executions = completions)' : '';
    violations.push(
      `re-execution bound${exact}: healthy executions ${counts.healthyExecutions} − completions ${counts.healthyCompletions} = ${healthyReExecutions} re-executions, more than the ${allowance.allowed} allowed (${allowance.basis})`,
    );
  }
  return violations;
}
