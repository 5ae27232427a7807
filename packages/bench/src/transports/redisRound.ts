import { Redis } from 'ioredis';
import { CommandCounter, countIoredis, diffCounts } from '../commandCounter.js';
import { deleteKeys, globEscape, serverCpuMicros } from '../redisInfo.js';
import type { ConsumeResult } from './types.js';

/** What a round cost in Redis, as a consumer session measures it. */
export type RedisRoundFigures = Required<
  Pick<ConsumeResult, 'redisCommands' | 'redisCpuMicros' | 'keysDeleted'>
>;

/**
 * The Redis side of a consumer session that keeps records there (hand-written or idemq): the
 * client it sends with, its commands counted where they leave, and an admin connection that
 * reads the server's CPU and deletes the round's keys (`<prefix>:*`) afterwards.
 */
export class RedisRoundMeter {
  readonly client: Redis;
  private readonly admin: Redis;
  private readonly sent = new CommandCounter();
  private sentAtStart = this.sent.snapshot();
  private cpuAtStart = Number.NaN;
  private cpuAtSettled = Number.NaN;

  constructor(
    redisUrl: string,
    private readonly prefix: string,
  ) {
    const options = { maxRetriesPerRequest: 1 };
    this.client = countIoredis(new Redis(redisUrl, options), this.sent);
    this.admin = new Redis(redisUrl, options);
  }

  /** Starts counting a round's commands and the server's CPU; call before the round's clock. */
  async start(): Promise<void> {
    this.cpuAtStart = await serverCpuMicros(this.admin);
    this.cpuAtSettled = Number.NaN;
    this.sentAtStart = this.sent.snapshot();
  }

  /** The round's last message is settled: stops the server's CPU count. */
  async settled(): Promise<void> {
    this.cpuAtSettled = await serverCpuMicros(this.admin);
  }

  /** The round's commands and server CPU, then its keys deleted. */
  async end(): Promise<RedisRoundFigures> {
    const redisCommands = diffCounts(this.sent.snapshot(), this.sentAtStart);
    const keysDeleted = await deleteKeys(this.admin, [`${globEscape(this.prefix)}:*`]);
    return { redisCommands, redisCpuMicros: this.cpuAtSettled - this.cpuAtStart, keysDeleted };
  }

  async close(): Promise<void> {
    await this.client.quit().catch(() => this.client.disconnect());
    await this.admin.quit().catch(() => this.admin.disconnect());
  }
}
