import { Redis } from 'ioredis';
import { CommandCounter, countIoredis, diffCounts } from '../commandCounter.js';
import { deleteKeys, globEscape, serverCpuMicros } from '../redisInfo.js';
import type { ConsumeResult, ConsumerInit } from './types.js';

/** What the guard adds to a raw consumer's round figures. */
export type GuardFigures = Pick<
  ConsumeResult,
  'storeRoundTrips' | 'redisCommands' | 'redisCpuMicros' | 'keysDeleted'
>;

/**
 * The idempotency a user would write by hand around a raw consumer, as the store benchmark's
 * baseline does: `SET key 1 NX PX 40000`, the handler, `SET key done PX 86400000`; a message
 * whose `SET … NX` fails is acked without running the handler. Two bare commands per message,
 * nothing else: no fencing, no atomic completion, no failure state, no lease renewal. It is the
 * idempotency most hand-rolled consumers have, so its rate shows what the simplest way of
 * claiming and completing every message in Redis costs on this machine.
 */
export class HandRolledGuard {
  private readonly sent = new CommandCounter();
  private sentAtStart = this.sent.snapshot();
  private redisCpuAtStart = Number.NaN;
  private redisCpuAtEnd = Number.NaN;

  private constructor(
    private readonly client: Redis,
    private readonly admin: Redis,
    private readonly prefix: string,
  ) {
    countIoredis(client, this.sent);
  }

  static open(init: ConsumerInit): HandRolledGuard {
    const options = { maxRetriesPerRequest: 1 };
    return new HandRolledGuard(
      new Redis(init.endpoints.redisUrl, options),
      new Redis(init.endpoints.redisUrl, options),
      `${init.namespace}:hand`,
    );
  }

  /** Runs `handler` unless `requestId` was claimed before. */
  async run(requestId: string, handler: () => Promise<void>): Promise<void> {
    const key = `${this.prefix}:${requestId}`;
    if ((await this.client.set(key, '1', 'PX', 40_000, 'NX')) === null) return;
    await handler();
    await this.client.set(key, 'done', 'PX', 86_400_000);
  }

  /** Starts counting a round's commands and the server's CPU; call before the round's clock. */
  async startRound(): Promise<void> {
    this.redisCpuAtStart = await serverCpuMicros(this.admin);
    this.redisCpuAtEnd = Number.NaN;
    this.sentAtStart = this.sent.snapshot();
  }

  /** The round's last message is settled: stops the server's CPU count. */
  async settled(): Promise<void> {
    this.redisCpuAtEnd = await serverCpuMicros(this.admin);
  }

  /** The round's commands (each its own round trip) and server CPU, then its keys deleted. */
  async endRound(): Promise<GuardFigures> {
    const redisCommands = diffCounts(this.sent.snapshot(), this.sentAtStart);
    const keysDeleted = await deleteKeys(this.admin, [`${globEscape(this.prefix)}:*`]);
    return {
      storeRoundTrips: redisCommands.total,
      redisCommands,
      redisCpuMicros: this.redisCpuAtEnd - this.redisCpuAtStart,
      keysDeleted,
    };
  }

  async close(): Promise<void> {
    await this.client.quit().catch(() => this.client.disconnect());
    await this.admin.quit().catch(() => this.admin.disconnect());
  }
}
