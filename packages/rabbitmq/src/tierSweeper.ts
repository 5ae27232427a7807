import type { Logger } from '@idemq/core';
import type { ConfirmChannel } from 'amqplib';
import { ConfirmTracker } from './confirms.js';
import type { Connector } from './connection.js';
import { describeAmqpError, PublishFailedError } from './errors.js';
import { copyOptions, InternalHeaders } from './headers.js';
import { answerWithin, closedWithin } from './rpcDeadline.js';

/** How long past its due time a copy may sit in a tier before the consumers move it. */
export function overdueAfterMs(tierMs: number): number {
  return Math.min(60_000, 1_000 + Math.ceil(tierMs / 10));
}

interface Watch {
  /** The queue the tier's copies go back to. */
  source: string;
  /** The tier's delay, for the grace of its copies. */
  tierMs: number;
  /** When to look (epoch ms): the earliest copy not known to be gone, once overdue. */
  checkAt: number;
}

export interface TierSweeperSettings {
  rpcTimeoutMs: number;
  confirmTimeoutMs: number;
  logger: Logger;
}

/**
 * The safety net under retry tiers: a copy a tier keeps past its time is moved back to its
 * source queue by the consumers themselves, instead of waiting for the broker for ever.
 *
 * A tier's copies are meant to leave by TTL dead-lettering, but RabbitMQ 3.10 can leave a quorum
 * tier's TTL unenforced, stranding every copy in it (docs/reliability.md). So after a copy goes
 * into a tier, the transport looks at that tier once the copy is overdue (due +
 * `overdueAfterMs`). In the common
 * case the tier is empty by then: one `basic.get` answers so. Otherwise the copies at its head
 * that are overdue are published to the source queue (confirmed, mandatory) and only then acked
 * from the tier; the first one not overdue goes back (a tier is FIFO with one TTL, so none behind
 * it is due either) and sets the next look. Several consumers may sweep one tier: `basic.get`
 * hands each copy to one of them, and a sweeper that dies mid-move leaves at worst a duplicate,
 * which idempotency absorbs. A subscription also looks at every tier of its queue when it
 * starts, so copies parked by a consumer that stopped or crashed are not left to the broker
 * alone (a tier never used answers 404 and is dropped).
 */
export class TierSweeper {
  private readonly watched = new Map<string, Watch>();
  private timer: NodeJS.Timeout | undefined;
  private armedFor = Number.POSITIVE_INFINITY;
  private sweeping = false;
  private stopped = false;

  constructor(
    private readonly connector: Connector,
    private readonly settings: TierSweeperSettings,
  ) {}

  /** A copy went into `tier` (of `tierMs`) at `publishedAt`: due back in `source` after it. */
  watch(tier: string, source: string, tierMs: number, publishedAt: number): void {
    this.lookAt(tier, source, tierMs, publishedAt + tierMs + overdueAfterMs(tierMs));
  }

  /** Stops looking (the transport is closing). */
  stop(): void {
    this.stopped = true;
    this.watched.clear();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Looks at `tier` at `checkAt` at the latest. */
  private lookAt(tier: string, source: string, tierMs: number, checkAt: number): void {
    if (this.stopped) return;
    const current = this.watched.get(tier);
    if (current && current.checkAt <= checkAt) return;
    this.watched.set(tier, { source, tierMs, checkAt });
    this.arm(checkAt);
  }

  private arm(at: number): void {
    if (this.stopped || at >= this.armedFor) return;
    if (this.timer) clearTimeout(this.timer);
    this.armedFor = at;
    this.timer = setTimeout(() => void this.onTimer(), Math.max(0, at - Date.now()));
    this.timer.unref();
  }

  private async onTimer(): Promise<void> {
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    if (this.sweeping) return; // the running sweep re-arms when done
    this.sweeping = true;
    try {
      for (const [tier, watch] of this.watched) {
        if (this.stopped || watch.checkAt > Date.now()) continue;
        this.watched.delete(tier);
        const next = await this.sweep(tier, watch);
        if (next !== undefined) this.lookAt(tier, watch.source, watch.tierMs, next);
      }
    } finally {
      this.sweeping = false;
    }
    let earliest = Number.POSITIVE_INFINITY;
    for (const watch of this.watched.values()) earliest = Math.min(earliest, watch.checkAt);
    if (earliest < Number.POSITIVE_INFINITY) this.arm(earliest);
  }

  /**
   * Moves `tier`'s overdue copies back to their source; returns when to look again (epoch ms),
   * or undefined when the tier is empty.
   */
  private async sweep(tier: string, watch: Watch): Promise<number | undefined> {
    const { rpcTimeoutMs, logger } = this.settings;
    const graceMs = overdueAfterMs(watch.tierMs);
    let channel: ConfirmChannel | undefined;
    let moved = 0;
    try {
      const live = await this.connector.get();
      const opening = Promise.resolve(live.model.createConfirmChannel());
      const abandon = () => void opening.then((ch) => ch.close()).catch(() => undefined);
      channel = await answerWithin(opening, rpcTimeoutMs, 'a channel open', abandon);
      channel.on('error', () => undefined); // reported through the failing call
      // Confirmed and mandatory: a copy leaves the tier only once its queue has it.
      const copies = new ConfirmTracker(channel, this.settings.confirmTimeoutMs);
      for (;;) {
        const got = await answerWithin(
          channel.get(tier, { noAck: false }),
          rpcTimeoutMs,
          `basic.get on queue "${tier}"`,
          abandon,
        );
        if (got === false) return undefined;
        const dueAt = Number(got.properties.headers?.[InternalHeaders.due]);
        const overdueAt = Number.isFinite(dueAt) ? dueAt + graceMs : undefined;
        if (overdueAt === undefined || overdueAt > Date.now()) {
          // Put back at the head. The count of this return stays in the tier: the copy reaches
          // its queue with `x-delivery-count` 0 (RabbitMQ 3.10), so its attempt is unchanged.
          channel.nack(got, false, true);
          return overdueAt ?? Date.now() + watch.tierMs + graceMs;
        }
        try {
          const options = copyOptions(got, { drop: [InternalHeaders.due] });
          await copies.publish('', watch.source, got.content, options);
        } catch (error) {
          // No queue to go back to (yet): the copy stays in the tier, and is looked at again.
          if (!(error instanceof PublishFailedError && error.failure === 'unroutable')) throw error;
          channel.nack(got, false, true);
          return Date.now() + graceMs;
        }
        channel.ack(got);
        moved += 1;
      }
    } catch (error) {
      // A tier never used (only used tiers are declared) has nothing to give back.
      if ((error as { code?: unknown }).code === 404) return undefined;
      logger.warn(
        { tier, error: describeAmqpError(error) },
        'idemq rabbitmq: looking for overdue copies in a retry tier failed; trying again',
      );
      return Date.now() + graceMs;
    } finally {
      if (moved > 0) {
        logger.warn(
          { tier, source: watch.source, moved },
          'idemq rabbitmq: moved copies the broker kept in a retry tier past their time back to their queue',
        );
      }
      const open = channel;
      if (open) void closedWithin(() => open.close(), rpcTimeoutMs);
    }
  }
}
