import { StoreUnavailableError } from '@idemq/core';
import { EarliestTimer } from '@idemq/core/adapter';
import { classifyRedisError, unexpectedReply } from './errorClassifier.js';
import type { ScriptRunner } from './scriptRunner.js';
import type { ScriptName } from './scripts.js';
import type { SharedArgs } from './sharedArgs.js';
import { keySlot } from './slot.js';

interface Pending {
  key: string;
  args: readonly (string | number)[];
  resolve: (reply: unknown) => void;
  reject: (error: Error) => void;
  /** Answered by then, whatever waits ahead of it: the store's timeout bounds each call. */
  deadline: number;
}

/** A script call on the wire, failed by the deadline sweep if Redis has not answered by then. */
interface InFlightCall {
  deadline: number;
  expire: () => void;
}

interface Lane {
  /** What every call of this lane passes before its keys' own arguments. */
  shared: SharedArgs;
  /** Calls of this lane on the wire. */
  sending: number;
  /** A send is due at the end of this tick. */
  scheduled: boolean;
  queue: Pending[];
}

/** One key's operation in `runBatch`. */
export interface BatchEntry {
  key: string;
  args: readonly (string | number)[];
  shared: SharedArgs;
}

export interface CoalescerOptions {
  runner: ScriptRunner;
  /** Group by Cluster slot (a multi-key script must stay in one slot). */
  perSlot: boolean;
  timeoutMs: number;
  /** Most keys in one script call, so no call blocks the server for long. */
  maxBatch: number;
  /**
   * Calls one lane keeps on the wire at once. With two, the server runs one batch while this
   * process answers the previous one and gathers the next, instead of each waiting on the other.
   */
  callsInFlight: number;
}

/**
 * Coalesces record operations into few script calls, Nagle-style: when a (script, slot) lane has
 * room on the wire an operation is sent at the end of the current tick (with whatever else the
 * tick issued), so an idle store adds no network latency; while the lane's calls are in flight,
 * operations queue and leave together in the next call. Throughput then grows with concurrency
 * instead of being bound by one script call per message.
 *
 * Two calls of at most 32 keys per lane, rather than one of up to 256: a burst of 64 claims
 * leaves as two calls, and the server runs the second while this process handles the replies
 * to the first (the measurements: docs/performance-history.md).
 */
export class Coalescer {
  private readonly lanes = new Map<string, Lane>();
  private readonly inFlight = new Set<InFlightCall>();
  /**
   * One timer for every call's deadline, where a `setTimeout` + `Promise.race` per call cost a
   * timer insert and removal and three promises per message.
   */
  private readonly deadlines = new EarliestTimer((now) => this.expire(now));
  /** Sequential network waits: the calls of one `runBatch`, sent together, count once. */
  roundTrips = 0;

  constructor(private readonly options: CoalescerOptions) {}

  /**
   * Queues one key's operation; resolves with that key's element of the reply (every script
   * answers one element per key). Operations share a call when they run the same script with
   * the same `shared` arguments (on the same slot).
   */
  run(script: ScriptName, key: string, args: readonly (string | number)[], shared: SharedArgs) {
    return new Promise<unknown>((resolve, reject) => {
      const laneId = this.callGroup(shared, key);
      let lane = this.lanes.get(laneId);
      if (!lane) {
        lane = { shared, sending: 0, scheduled: false, queue: [] };
        this.lanes.set(laneId, lane);
      }
      const deadline = performance.now() + this.options.timeoutMs;
      lane.queue.push({ key, args, resolve, reject, deadline });
      this.schedule(script, lane);
    });
  }

  /** Operations that may share a call: same script and shared arguments (and Cluster slot). */
  private callGroup(shared: SharedArgs, key: string): string {
    return this.options.perSlot ? `${shared.id}#${keySlot(key)}` : shared.id;
  }

  /**
   * Sends at the end of this tick, not at once: operations issued together (a burst of
   * deliveries from one socket read, the completions of one claim reply) then share one script
   * call, one socket write and one server round, at the cost of one tick.
   */
  private schedule(script: ScriptName, lane: Lane): void {
    if (lane.scheduled || lane.sending >= this.options.callsInFlight) return;
    lane.scheduled = true;
    process.nextTick(() => {
      lane.scheduled = false;
      void this.sendQueued(script, lane);
    });
  }

  /**
   * Sends many keys' operations at once, bypassing the lanes: a script call per slot and per
   * `maxBatch` keys, all on the wire together (one round trip of latency, also on Cluster).
   * Replies in input order; a call that fails (a timeout, a node down) fails only its own keys'
   * entries, as the `Error` in their place.
   */
  async runBatch(script: ScriptName, entries: readonly BatchEntry[]): Promise<unknown[]> {
    const groups = new Map<string, { shared: SharedArgs; indexes: number[] }>();
    entries.forEach((entry, index) => {
      const id = this.callGroup(entry.shared, entry.key);
      let group = groups.get(id);
      if (!group) {
        group = { shared: entry.shared, indexes: [] };
        groups.set(id, group);
      }
      group.indexes.push(index);
    });
    const replies: unknown[] = new Array(entries.length);
    if (entries.length > 0) this.roundTrips += 1;
    const calls: Promise<void>[] = [];
    for (const { shared, indexes } of groups.values()) {
      for (let start = 0; start < indexes.length; start += this.options.maxBatch) {
        const chunk = indexes.slice(start, start + this.options.maxBatch);
        const batch = chunk.map((i) => entries[i] as BatchEntry);
        calls.push(
          this.send(script, shared, batch, this.options.timeoutMs).then(
            (reply) => {
              chunk.forEach((entryIndex, i) => {
                replies[entryIndex] = reply[i];
              });
            },
            (error: Error) => {
              for (const entryIndex of chunk) replies[entryIndex] = error;
            },
          ),
        );
      }
    }
    await Promise.all(calls);
    return replies;
  }

  /**
   * One script call for `batch`, checked for shape; errors become typed store errors. A key's
   * own error comes back as its element of the reply, for its caller alone to decode.
   */
  private async send(
    script: ScriptName,
    shared: SharedArgs,
    batch: readonly { key: string; args: readonly (string | number)[] }[],
    budgetMs: number,
  ): Promise<unknown[]> {
    try {
      if (budgetMs <= 0) {
        throw new StoreUnavailableError(
          `Redis ${script} timed out after ${this.options.timeoutMs} ms`,
          { reason: 'timeout' },
        );
      }
      const reply = await this.bounded(
        this.options.runner.run(script, keysOf(batch), argsOf(shared, batch)),
        Math.ceil(budgetMs),
        script,
      );
      // Not one element per key: no key's outcome can be trusted, and no record is to blame.
      if (!Array.isArray(reply) || reply.length !== batch.length) {
        throw unexpectedReply(script, reply, 'store');
      }
      return reply;
    } catch (error) {
      throw classifyRedisError(script, error);
    }
  }

  /** `call`, or a retriable timeout error once `budgetMs` have passed without its reply. */
  private bounded<T>(call: Promise<T>, budgetMs: number, script: ScriptName): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const entry: InFlightCall = {
        deadline: performance.now() + budgetMs,
        expire: () =>
          reject(
            new StoreUnavailableError(`Redis ${script} timed out after ${budgetMs} ms`, {
              reason: 'timeout',
            }),
          ),
      };
      this.inFlight.add(entry);
      this.deadlines.request(entry.deadline);
      call.then(
        (reply) => {
          this.inFlight.delete(entry);
          resolve(reply);
        },
        (error: unknown) => {
          this.inFlight.delete(entry);
          reject(error);
        },
      );
    });
  }

  /** Fails the calls whose deadline passed; returns the next deadline, if any. */
  private expire(now: number): number | undefined {
    let next = Number.POSITIVE_INFINITY;
    for (const call of this.inFlight) {
      if (call.deadline <= now) {
        this.inFlight.delete(call);
        call.expire();
      } else if (call.deadline < next) {
        next = call.deadline;
      }
    }
    return next === Number.POSITIVE_INFINITY ? undefined : next;
  }

  /** One call with what the lane has queued; then the next, while operations keep coming. */
  private async sendQueued(script: ScriptName, lane: Lane): Promise<void> {
    if (lane.queue.length === 0) return;
    const batch = lane.queue.splice(0, this.options.maxBatch);
    lane.sending += 1;
    // More than one call's worth queued: the rest leaves now too, if the lane has room.
    if (lane.queue.length > 0) this.schedule(script, lane);
    let earliest = Number.POSITIVE_INFINITY;
    for (const p of batch) if (p.deadline < earliest) earliest = p.deadline;
    const budgetMs = earliest - performance.now();
    this.roundTrips += 1;
    try {
      const reply = await this.send(script, lane.shared, batch, budgetMs);
      for (let i = 0; i < batch.length; i++) (batch[i] as Pending).resolve(reply[i]);
    } catch (error) {
      for (const p of batch) p.reject(error as Error);
    }
    lane.sending -= 1;
    if (lane.queue.length > 0) this.schedule(script, lane);
  }
}

function keysOf(batch: readonly { key: string }[]): string[] {
  if (batch.length === 1) return [(batch[0] as { key: string }).key];
  return batch.map((p) => p.key);
}

/** The call's shared arguments, then each key's own. */
function argsOf(
  shared: SharedArgs,
  batch: readonly { args: readonly (string | number)[] }[],
): (string | number)[] {
  const args: (string | number)[] = [...shared.values];
  for (const p of batch) for (const arg of p.args) args.push(arg);
  return args;
}
