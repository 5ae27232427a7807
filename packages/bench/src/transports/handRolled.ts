import { setNxGuarded } from '../contenders/baseline.js';
import { type HandlerTally, noop } from './consumerKit.js';
import { RedisRoundMeter } from './redisRound.js';
import type { ConsumeResult, ConsumerInit } from './types.js';

/** What the guard adds to a raw consumer's round figures. */
export type GuardFigures = Pick<
  ConsumeResult,
  'storeRoundTrips' | 'redisCommands' | 'redisCpuMicros' | 'keysDeleted'
>;

/** Idempotency around a raw consumer's handler: hand-written, or idemq's store alone. */
export interface RawGuard {
  /** Runs `handler` unless `requestId` was claimed before. */
  run(requestId: string, handler: () => Promise<void>): Promise<void>;
  /** Starts counting a round's commands and the server's CPU; call before the round's clock. */
  startRound(): Promise<void>;
  /** The round's last message is settled: stops the server's CPU count. */
  settled(): Promise<void>;
  /** The round's round trips, commands and server CPU, then its keys deleted. */
  endRound(): Promise<GuardFigures>;
  close(): Promise<void>;
}

/**
 * The idempotency a user would write by hand around a raw consumer, as the store benchmark's
 * baseline does: `SET key 1 NX PX 40000`, the handler, `SET key done PX 86400000`; a message
 * whose `SET … NX` fails is acked without running the handler. Two bare commands per message,
 * nothing else: no fencing, no atomic completion, no failure state, no lease renewal. It is the
 * idempotency most hand-rolled consumers have, so its rate shows what the simplest way of
 * claiming and completing every message in Redis costs on this machine.
 */
export class HandRolledGuard implements RawGuard {
  private constructor(
    private readonly redis: RedisRoundMeter,
    private readonly prefix: string,
  ) {}

  static open(init: ConsumerInit): HandRolledGuard {
    const prefix = `${init.namespace}:hand`;
    return new HandRolledGuard(new RedisRoundMeter(init.endpoints.redisUrl, prefix), prefix);
  }

  /** Runs `handler` unless `requestId` was claimed before. */
  async run(requestId: string, handler: () => Promise<void>): Promise<void> {
    await setNxGuarded(this.redis.client, `${this.prefix}:${requestId}`, handler);
  }

  /** Starts counting a round's commands and the server's CPU; call before the round's clock. */
  startRound(): Promise<void> {
    return this.redis.start();
  }

  /** The round's last message is settled: stops the server's CPU count. */
  settled(): Promise<void> {
    return this.redis.settled();
  }

  /** The round's commands (each its own round trip) and server CPU, then its keys deleted. */
  async endRound(): Promise<GuardFigures> {
    const figures = await this.redis.end();
    return { storeRoundTrips: figures.redisCommands.total, ...figures };
  }

  close(): Promise<void> {
    return this.redis.close();
  }
}

/**
 * A raw consumer's handler step: counts the run and calls the no-op handler, under `guard`
 * when there is one (then a duplicate neither runs nor counts).
 */
export function handleRaw(
  tally: HandlerTally,
  requestId: string,
  body: unknown,
  guard: RawGuard | undefined,
): Promise<void> {
  if (!guard) {
    tally.add(requestId);
    return noop(body);
  }
  return guard.run(requestId, () => {
    tally.add(requestId);
    return noop(body);
  });
}
