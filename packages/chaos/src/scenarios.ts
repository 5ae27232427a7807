/**
 * F01–F07 of the fault suite (docs/reliability.md), plus the soak: sizes, handler timing,
 * faults, the bound on re-executions and the extra pass criterion of each. `bounded` sizes keep
 * `pnpm test` short; the CLI scales `messages` up.
 */
import type { AuditReport } from './audit.js';
import { type ExecutionBound, FAULT_BOUND } from './executionBound.js';
import type { FaultPlan } from './faults.js';
import type { CounterName } from './ledger.js';
import type { TransportName } from './transports/spec.js';

export const SCENARIO_IDS = [
  'F01',
  'F02',
  'F03',
  'F04',
  'F04-restart',
  'F05-heartbeat',
  'F05-no-heartbeat',
  'F06',
  'F07',
  'soak',
] as const;
export type ScenarioId = (typeof SCENARIO_IDS)[number];

export interface Scenario extends FaultPlan {
  id: ScenarioId;
  title: string;
  consumers: number;
  /** Unique healthy ids. */
  messages: number;
  /** Fraction of healthy ids published two or more times. */
  duplicateRate: number;
  /** Poison ids (the handler always throws). */
  poison: number;
  /** Copies of each bad-input kind. */
  badInputCopies: number;
  concurrency: number;
  leaseMs: number;
  heartbeat: boolean;
  workMs: number;
  /**
   * Handler work on a record's first attempt, when it differs (F05: the first owner is slow, a
   * takeover is fast, so a lease lapse shows as one zombie rather than an endless relay).
   */
  firstAttemptWorkMs?: number;
  maxAttempts: number;
  retryBaseDelayMs: number;
  /** One fault every `faultEveryMs` (see `FaultPlan`). */
  faultEveryMs: number;
  /**
   * Publishing is spread over the fault schedule unless this says otherwise (0: as fast as the
   * broker takes it, done before the first fault).
   */
  publishOverMs?: number;
  /** The transports the scenario runs on (default: every one). */
  transports?: readonly TransportName[];
  /** How many handler runs beyond one per message the scenario's faults may cause. */
  executionBound: ExecutionBound;
  /** Extra pass criterion: returns the reasons it failed (empty: passed). */
  check?: (report: AuditReport, counters: Record<CounterName, number>) => string[];
}

const BASE = {
  consumers: 3,
  duplicateRate: 0.3,
  poison: 0,
  badInputCopies: 0,
  concurrency: 10,
  leaseMs: 2_000,
  heartbeat: true,
  workMs: 5,
  maxAttempts: 10,
  retryBaseDelayMs: 100,
  kills: 0,
  storeRestarts: 0,
  storeKills: 0,
  brokerBreaks: 0,
  brokerRestarts: 0,
  faultEveryMs: 2_000,
  executionBound: FAULT_BOUND,
} as const;

/** The bounded version of every scenario, as `pnpm test` runs it. */
export function boundedScenario(id: ScenarioId): Scenario {
  switch (id) {
    case 'F01':
      return {
        ...BASE,
        id,
        title: 'duplicate storm',
        consumers: 8,
        messages: 1_000,
        concurrency: 16,
      };
    case 'F02':
      return {
        ...BASE,
        id,
        title: 'SIGKILL mid-handler',
        consumers: 3,
        messages: 400,
        // Long enough that every consumer has handlers running when it is killed.
        workMs: 200,
        kills: 3,
        faultEveryMs: 1_500,
      };
    case 'F03':
      return {
        ...BASE,
        id,
        title: 'store restarted mid-run (SIGTERM, then SIGKILL)',
        messages: 400,
        workMs: 20,
        storeRestarts: 1,
        storeKills: 1,
        faultEveryMs: 2_500,
      };
    case 'F04':
      return {
        ...BASE,
        id,
        title: 'broker connections cut mid-run',
        messages: 400,
        workMs: 20,
        brokerBreaks: 2,
        faultEveryMs: 2_500,
      };
    case 'F04-restart':
      return {
        ...BASE,
        id,
        title: 'private RabbitMQ broker restarted mid-run',
        messages: 400,
        // Long enough that handlers are in flight when the broker goes down.
        workMs: 200,
        brokerRestarts: 1,
        // Published before the restart: the test is the consumers', not the publisher's.
        publishOverMs: 0,
        faultEveryMs: 2_000,
        // Only RabbitMQ can run a broker of the suite's own here (see docs/reliability.md).
        transports: ['rabbitmq'],
      };
    case 'F05-heartbeat':
      return {
        ...BASE,
        id,
        title: 'handler 3× the lease, heartbeat on',
        consumers: 2,
        messages: 20,
        duplicateRate: 1,
        // Room for every copy at once: a copy waiting for a slot would only see the result.
        concurrency: 64,
        leaseMs: 1_500,
        firstAttemptWorkMs: 4_500,
      };
    case 'F05-no-heartbeat':
      return {
        ...BASE,
        id,
        title: 'handler 3× the lease, heartbeat off',
        consumers: 2,
        messages: 20,
        duplicateRate: 1,
        concurrency: 64,
        leaseMs: 1_500,
        heartbeat: false,
        firstAttemptWorkMs: 4_500,
        // Only the first attempt outlives its lease: one takeover per id, and no more.
        executionBound: { ...FAULT_BOUND, perId: 1 },
        check: (_report, counters) =>
          counters.leaseLostStore > 0 ? [] : ['no lease-lost emitted: no zombie was refused'],
      };
    case 'F06':
      return {
        ...BASE,
        id,
        title: 'poison messages',
        messages: 300,
        poison: 10,
        maxAttempts: 3,
        retryBaseDelayMs: 50,
      };
    case 'F07':
      return {
        ...BASE,
        id,
        title: 'bad input',
        consumers: 2,
        messages: 100,
        badInputCopies: 3,
      };
    case 'soak':
      return {
        ...BASE,
        id,
        title: 'soak: duplicate storm with a fault every 10 s',
        consumers: 4,
        messages: 100_000,
        concurrency: 32,
        workMs: 5,
        // F02, F03 and F04 in turn until every message is settled.
        rotation: ['kill', 'storeRestart', 'kill', 'brokerBreak'],
        faultEveryMs: 10_000,
      };
  }
}
