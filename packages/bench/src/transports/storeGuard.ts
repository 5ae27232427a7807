import { IDEMPOTENCY_DEFAULTS } from '@idemq/core';
import { redisStore } from '@idemq/redis';
import type { GuardFigures, RawGuard } from './handRolled.js';
import { RedisRoundMeter } from './redisRound.js';
import type { ConsumerInit } from './types.js';

const SCOPE = 'bench';
/** The settings idemq's consumer runs with by default, so the floors do the same store work. */
const { leaseMs, failedTtlMs, completedTtlMs } = IDEMPOTENCY_DEFAULTS;

/**
 * idemq's Redis store alone around a raw consumer's handler: `store.claim`, the handler, then
 * `store.complete` (or, with `completes: false`, no completion at all). No engine, no transport
 * adapter, no lease renewal, no error handling: a floor, not a consumer anyone should ship. Its
 * rate beside idemq's shows what the engine and adapter cost; beside raw, what claiming (and
 * completing) in Redis before the ack costs on this machine, whatever runs around it.
 */
export class StoreGuard implements RawGuard {
  private readonly store: ReturnType<typeof redisStore>;
  private roundTripsAtStart = 0;

  private constructor(
    private readonly redis: RedisRoundMeter,
    prefix: string,
    private readonly completes: boolean,
  ) {
    this.store = redisStore({ client: redis.client, prefix });
  }

  static open(init: ConsumerInit, { completes }: { completes: boolean }): StoreGuard {
    const prefix = `${init.namespace}:${completes ? 'store' : 'claim'}`;
    return new StoreGuard(new RedisRoundMeter(init.endpoints.redisUrl, prefix), prefix, completes);
  }

  async run(requestId: string, handler: () => Promise<void>): Promise<void> {
    const claim = await this.store.claim({
      scope: SCOPE,
      requestId,
      leaseMs,
      retainMs: failedTtlMs,
    });
    if (claim.status !== 'claimed') return;
    await handler();
    if (!this.completes) return;
    await this.store.complete({
      scope: SCOPE,
      requestId,
      token: claim.token,
      ttlMs: completedTtlMs,
    });
  }

  startRound(): Promise<void> {
    this.roundTripsAtStart = this.store.stats().roundTrips;
    return this.redis.start();
  }

  settled(): Promise<void> {
    return this.redis.settled();
  }

  async endRound(): Promise<GuardFigures> {
    const storeRoundTrips = this.store.stats().roundTrips - this.roundTripsAtStart;
    return { storeRoundTrips, ...(await this.redis.end()) };
  }

  async close(): Promise<void> {
    await this.store.close();
    await this.redis.close();
  }
}
