/* What every consumer of the benchmark, raw or idemq, on any transport, measures alike. */
import type { ConsumerEventName } from '@idemq/core';
import { machineBusyMicros } from '../machine.js';
import type { ConsumeRequest, ConsumeResult } from './types.js';

/** The business handler of every consumer: does nothing. */
export const noop = async (_body: unknown): Promise<void> => {};

/** Counts handler runs and runs for a requestId seen before. */
export class HandlerTally {
  runs = 0;
  duplicates = 0;
  private readonly seen = new Set<string>();

  add(requestId: string): void {
    this.runs += 1;
    if (this.seen.has(requestId)) this.duplicates += 1;
    else this.seen.add(requestId);
  }

  get distinct(): number {
    return this.seen.size;
  }
}

/**
 * Resolves once `count()` reaches `messages` (recording the time and the process's CPU then);
 * rejects when nothing moved for `stallMs`. `tick()` is called on every settlement.
 */
export class Completion {
  private resolve: (() => void) | undefined;
  private reject: ((error: Error) => void) | undefined;
  private lastProgress = performance.now();
  private readonly timer: NodeJS.Timeout;
  /** performance.now(), process.cpuUsage() and the machine's CPU when `messages` was reached. */
  endedAt = Number.NaN;
  endedCpu: NodeJS.CpuUsage = { user: Number.NaN, system: Number.NaN };
  endedMachineMicros = Number.NaN;
  readonly done: Promise<void>;

  constructor(
    private readonly messages: number,
    private readonly count: () => number,
    stallMs: number,
    describe: () => string,
  ) {
    this.done = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // Awaited by the round; a failure after the round gave up waiting is not unhandled.
    this.done.catch(() => undefined);
    this.timer = setInterval(
      () => {
        if (performance.now() - this.lastProgress > stallMs) {
          this.fail(new Error(`no progress for ${stallMs} ms: ${describe()}`));
        }
      },
      Math.min(1_000, stallMs),
    );
  }

  get reached(): boolean {
    return Number.isFinite(this.endedAt);
  }

  tick(): void {
    this.lastProgress = performance.now();
    if (this.count() >= this.messages && this.resolve) {
      this.endedAt = this.lastProgress;
      this.endedCpu = process.cpuUsage();
      this.endedMachineMicros = machineBusyMicros();
      this.resolve();
      this.settle();
    }
  }

  /** The CPU time between `cpu0` and the moment `messages` was reached. */
  cpuSince(cpu0: NodeJS.CpuUsage): number {
    return this.endedCpu.user - cpu0.user + (this.endedCpu.system - cpu0.system);
  }

  fail(error: Error): void {
    this.reject?.(error);
    this.settle();
  }

  private settle(): void {
    this.resolve = undefined;
    this.reject = undefined;
    clearInterval(this.timer);
  }
}

/** Where a round's clock and CPU counters started. */
export interface RoundStart {
  at: number;
  cpu: NodeJS.CpuUsage;
  /** `machineBusyMicros()`: every process's CPU, broker and Redis included. */
  machineMicros: number;
  /** When the call that starts consuming resolved. */
  startedAt: number;
}

/** Collects garbage, then starts the clock and the CPU counters of a round. */
export function startRound(): RoundStart {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.(); // a clean heap where the process allows it (`--expose-gc`)
  const at = performance.now();
  return {
    at,
    cpu: process.cpuUsage(),
    machineMicros: machineBusyMicros(),
    startedAt: Number.NaN,
  };
}

/** The figures every consumer reports for a round; idemq adds its Redis counts. */
export function roundFigures(
  request: ConsumeRequest,
  start: RoundStart,
  completion: Completion,
  tally: HandlerTally,
  acked: number,
): Omit<ConsumeResult, 'events'> {
  const ms = completion.endedAt - start.at;
  return {
    run: request.run,
    source: request.source,
    messages: request.messages,
    ms,
    startMs: start.startedAt - start.at,
    messagesPerSecond: request.messages / (ms / 1_000),
    acked,
    handlerRuns: tally.runs,
    distinctIds: tally.distinct,
    duplicateRuns: tally.duplicates,
    cpuMicros: completion.cpuSince(start.cpu),
    machineCpuMicros: completion.endedMachineMicros - start.machineMicros,
  };
}

/** A raw consumer's round: its handler runs, its acks, and when the last one came. */
export class RawRound {
  readonly tally = new HandlerTally();
  acked = 0;
  readonly completion: Completion;

  constructor(
    private readonly request: ConsumeRequest,
    consumer: string,
  ) {
    this.completion = new Completion(
      request.messages,
      () => this.acked,
      request.stallTimeoutMs,
      () => `${consumer} acked ${this.acked}/${request.messages} from ${request.source}`,
    );
  }

  /** `count` more messages acked (deleted, offsets resolved). */
  ack(count = 1): void {
    this.acked += count;
    this.completion.tick();
  }

  result(start: RoundStart): ConsumeResult {
    return {
      ...roundFigures(this.request, start, this.completion, this.tally, this.acked),
      events: {},
    };
  }
}

/** Consumer events counted per round (`lease-extended` never fires in a round this short). */
export const COUNTED_EVENTS = [
  'processed',
  'duplicate',
  'in-progress',
  'retry',
  'dead-letter',
  'lease-lost',
  'store-error',
  'error',
] as const satisfies readonly ConsumerEventName[];
