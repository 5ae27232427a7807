/**
 * The side-effect ledger: what really happened, recorded by the consumers in a Redis that is never
 * restarted (127.0.0.1:6379), under a per-run key prefix. The suite checks idemq against it
 * instead of trusting the consumers' own bookkeeping.
 *
 * - a *claim* is a `claimed` answer of the store, with its fencing token;
 * - an *execution* is a handler call, with the token it ran under;
 * - an *effect* is the handler's side effect, committed through a fenced, transactional write
 *   (see {@link Ledger.commitEffect});
 * - a *completion* is a COMPLETED transition the store accepted;
 * - a *dead letter* is a copy read back from the dead-letter destination.
 */
import { Redis } from 'ioredis';

/**
 * One atomic script per effect, the way a downstream system that honours fencing tokens would
 * apply it. KEYS: maxToken hash, effect hash, replays hash, stale counter hash. ARGV: id, token.
 * A token lower than one already seen for the id is refused (a zombie); an effect already applied
 * is not applied again (the transactional store closing the crash-before-COMPLETED window).
 */
const COMMIT_EFFECT = `
local seen = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
local token = tonumber(ARGV[2])
if token < seen then
  redis.call('HINCRBY', KEYS[4], 'staleEffects', 1)
  return 'stale'
end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then
  redis.call('HINCRBY', KEYS[3], ARGV[1], 1)
  return 'replayed'
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 'applied'
`;

/** Raises the highest token seen for an id: an execution announces itself downstream. */
const BEGIN_EXECUTION = `
local seen = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if tonumber(ARGV[2]) > seen then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
redis.call('SADD', KEYS[3], ARGV[1] .. '|' .. ARGV[2])
return 1
`;

export type EffectOutcome = 'applied' | 'replayed' | 'stale';

/** Counters every run reports; consumers bump them from their events. */
export const Counters = {
  leaseLostStore: 'leaseLostStore',
  leaseLostBroker: 'leaseLostBroker',
  storeErrors: 'storeErrors',
  duplicatesSkipped: 'duplicatesSkipped',
  staleEffects: 'staleEffects',
  deadLetterEvents: 'deadLetterEvents',
  transportErrors: 'transportErrors',
} as const;
export type CounterName = (typeof Counters)[keyof typeof Counters];

/**
 * Settlements that send a message round again (`store-error`, `in-progress`, `retry`,
 * `lease-lost`), counted per id, so a lost id's trace tells a copy that never came back from
 * one that kept coming back.
 */
export const TRAIL_EVENTS = ['store-error', 'in-progress', 'retry', 'lease-lost'] as const;
export type TrailEvent = (typeof TRAIL_EVENTS)[number];

/** What the consumers reported for one id, besides its executions. */
export interface IdTrail {
  counts: Partial<Record<TrailEvent, number>>;
  /** The last of those events: its kind, worker and time (epoch ms). */
  last: { event: TrailEvent; worker: string; at: number } | undefined;
}

/** One dead letter as read back from the dead-letter destination. */
export interface DeadLetterEntry {
  requestId: string | undefined;
  code: string | undefined;
  reason: string | undefined;
  attempts: number | undefined;
}

/** Everything the ledger holds about a run, read back at the end. */
export interface LedgerSnapshot {
  /** Executions per id. */
  executions: Map<string, number>;
  /** Effects applied per id (the token of the one applied). */
  effects: Map<string, number>;
  /** Replayed effects per id: a re-execution found the effect already applied. */
  replays: Map<string, number>;
  /** COMPLETED transitions per id. */
  completions: Map<string, number>;
  /** Executions whose (id, token) no successful claim issued. */
  unclaimedExecutions: number;
  deadLetters: DeadLetterEntry[];
  counters: Record<CounterName, number>;
}

export class Ledger {
  readonly redis: Redis;

  constructor(
    url: string,
    readonly prefix: string,
  ) {
    this.redis = new Redis(url, { maxRetriesPerRequest: null });
  }

  private key(name: string): string {
    return `${this.prefix}:${name}`;
  }

  /** A store claim succeeded with `fencingToken`. */
  async recordClaim(requestId: string, fencingToken: number): Promise<void> {
    await this.redis.sadd(this.key('claims'), `${requestId}|${fencingToken}`);
  }

  /** The handler started for `requestId` under `fencingToken`. */
  async beginExecution(requestId: string, fencingToken: number): Promise<void> {
    await this.redis.eval(
      BEGIN_EXECUTION,
      3,
      this.key('maxToken'),
      this.key('executions'),
      this.key('execTokens'),
      requestId,
      fencingToken,
    );
  }

  /** Applies the handler's side effect, fenced and at most once per id. */
  async commitEffect(requestId: string, fencingToken: number): Promise<EffectOutcome> {
    return (await this.redis.eval(
      COMMIT_EFFECT,
      4,
      this.key('maxToken'),
      this.key('effects'),
      this.key('replays'),
      this.key('counters'),
      requestId,
      fencingToken,
    )) as EffectOutcome;
  }

  /** The store accepted a COMPLETED transition for `requestId`. */
  async recordCompletion(requestId: string): Promise<void> {
    await this.redis.hincrby(this.key('completions'), requestId, 1);
  }

  /** The ids among `ids` with no COMPLETED transition in the ledger yet. */
  async uncompleted(ids: readonly string[]): Promise<string[]> {
    const done = new Set(await this.redis.hkeys(this.key('completions')));
    return ids.filter((id) => !done.has(id));
  }

  /** A consumer sent `requestId` round again (see `TRAIL_EVENTS`). */
  async noteTrail(requestId: string, event: TrailEvent, worker: string): Promise<void> {
    await this.redis
      .multi()
      .hincrby(this.key(`trail:${event}`), requestId, 1)
      .hset(this.key('trail:last'), requestId, `${event}|${worker}|${Date.now()}`)
      .exec();
  }

  /** The trail of each of `ids` (read only for the ids a failed run reports). */
  async trails(ids: readonly string[]): Promise<Map<string, IdTrail>> {
    const trails = new Map<string, IdTrail>();
    if (ids.length === 0) return trails;
    const counts = await Promise.all(
      TRAIL_EVENTS.map((event) => this.redis.hmget(this.key(`trail:${event}`), ...ids)),
    );
    const last = await this.redis.hmget(this.key('trail:last'), ...ids);
    ids.forEach((id, i) => {
      const trail: IdTrail = { counts: {}, last: undefined };
      TRAIL_EVENTS.forEach((event, e) => {
        const count = Number(counts[e]?.[i] ?? 0);
        if (count > 0) trail.counts[event] = count;
      });
      const [event, worker, at] = (last[i] ?? '').split('|');
      if (event && worker && at)
        trail.last = { event: event as TrailEvent, worker, at: Number(at) };
      trails.set(id, trail);
    });
    return trails;
  }

  async bump(counter: CounterName, by = 1): Promise<void> {
    await this.redis.hincrby(this.key('counters'), counter, by);
  }

  async recordDeadLetter(entry: DeadLetterEntry): Promise<void> {
    await this.redis.rpush(this.key('deadLetters'), JSON.stringify(entry));
  }

  /** Dead letters read back so far (a few hundred at most: polled while a run settles). */
  async deadLetters(): Promise<DeadLetterEntry[]> {
    const lines = await this.redis.lrange(this.key('deadLetters'), 0, -1);
    return lines.map((line) => JSON.parse(line) as DeadLetterEntry);
  }

  /** Ids with an applied effect so far (cheap: polled while waiting for a run to settle). */
  async effectCount(): Promise<number> {
    return this.redis.hlen(this.key('effects'));
  }

  async snapshot(): Promise<LedgerSnapshot> {
    const numbers = (raw: Record<string, string>) =>
      new Map(Object.entries(raw).map(([k, v]) => [k, Number(v)]));
    const unclaimedKey = this.key('unclaimed');
    await this.redis.sdiffstore(unclaimedKey, this.key('execTokens'), this.key('claims'));
    const [executions, effects, replays, completions, unclaimed, deadLetters, counters] =
      await Promise.all([
        this.redis.hgetall(this.key('executions')),
        this.redis.hgetall(this.key('effects')),
        this.redis.hgetall(this.key('replays')),
        this.redis.hgetall(this.key('completions')),
        this.redis.scard(unclaimedKey),
        this.redis.lrange(this.key('deadLetters'), 0, -1),
        this.redis.hgetall(this.key('counters')),
      ]);
    const counterValues = Object.fromEntries(
      Object.values(Counters).map((name) => [name, Number(counters[name] ?? 0)]),
    ) as Record<CounterName, number>;
    return {
      executions: numbers(executions),
      effects: numbers(effects),
      replays: numbers(replays),
      completions: numbers(completions),
      unclaimedExecutions: unclaimed,
      deadLetters: deadLetters.map((line) => JSON.parse(line) as DeadLetterEntry),
      counters: counterValues,
    };
  }

  /** Deletes every key of the run. */
  async drop(): Promise<void> {
    const names = [
      'claims',
      'maxToken',
      'executions',
      'execTokens',
      'effects',
      'replays',
      'completions',
      'counters',
      'deadLetters',
      'unclaimed',
      'trail:last',
      ...TRAIL_EVENTS.map((event) => `trail:${event}`),
    ];
    await this.redis.del(...names.map((name) => this.key(name)));
  }

  close(): void {
    this.redis.disconnect();
  }
}
