import type { Channel, Options } from 'amqplib';
import type { Connector, LiveConnection } from './connection.js';
import { describeAmqpError, TransportUnavailableError } from './errors.js';
import { DEFAULT_GROUP, type ResolvedOptions } from './options.js';
import { answerWithin, closedWithin } from './rpcDeadline.js';
import { TierSweeper } from './tierSweeper.js';
import { chooseTier, type TierChoice } from './tiers.js';

/** The broker objects one subscription reads from and writes to. */
export interface SubscriptionTopology {
  /** Fanout exchange publishes to the source go to. */
  exchange: string;
  /** The group's queue, bound to `exchange`. */
  queue: string;
  /** Fanout exchange of the dead-letter destination (`source + deadLetterSuffix`). */
  deadLetterExchange: string;
  /** The dead-letter destination's default queue, bound to `deadLetterExchange`. */
  deadLetterQueue: string;
}

/** A retry tier queue for one source queue. */
export interface RetryTier extends TierChoice {
  queue: string;
}

type TopologySettings = Pick<
  ResolvedOptions,
  | 'queueType'
  | 'declare'
  | 'deadLetterSuffix'
  | 'queueName'
  | 'exchangeName'
  | 'retryTiersMs'
  | 'rpcTimeoutMs'
  | 'confirmTimeoutMs'
  | 'logger'
>;

/**
 * Names and declares the broker objects (once per connection): per destination a durable fanout
 * exchange; per (source, group) a durable queue bound to it whose broker-side dead letters
 * (e.g. a quorum queue's delivery limit) go to the dead-letter exchange; per dead-letter
 * destination its exchange and default queue; per source queue the retry tiers actually used.
 * Declarations run on a channel of their own, so a refused one (406 PRECONDITION_FAILED for an
 * existing queue with other arguments) never takes a consumer's channel down with it.
 */
export class Topology {
  private generation = 0;
  private channel: Promise<Channel> | undefined;
  private readonly declared = new Map<string, Promise<void>>();

  /** Moves back copies a tier keeps past their time. */
  private readonly sweeper: TierSweeper;

  constructor(
    private readonly connector: Connector,
    private readonly settings: TopologySettings,
  ) {
    this.sweeper = new TierSweeper(connector, settings);
  }

  /** The names a subscription of `source` in `group` uses. */
  names(source: string, group: string = DEFAULT_GROUP): SubscriptionTopology {
    const { exchangeName, queueName, deadLetterSuffix } = this.settings;
    const deadLetters = source + deadLetterSuffix;
    return {
      exchange: exchangeName(source),
      queue: queueName(source, group),
      deadLetterExchange: exchangeName(deadLetters),
      deadLetterQueue: queueName(deadLetters, DEFAULT_GROUP),
    };
  }

  /** The exchange of `destination`, declared when the transport declares. */
  async exchange(destination: string): Promise<string> {
    const name = this.settings.exchangeName(destination);
    if (this.settings.declare) {
      await this.once(`exchange:${name}`, (ch) =>
        ch.assertExchange(name, 'fanout', { durable: true }),
      );
    }
    return name;
  }

  /**
   * Declares (or, with `declare: false`, checks) everything a subscription needs, so that it
   * fails at `subscribe()` rather than at its first dead letter.
   */
  async subscription(source: string, group: string): Promise<SubscriptionTopology> {
    const names = this.names(source, group);
    if (!this.settings.declare) {
      await this.check(`queue "${names.queue}"`, (ch) => ch.checkQueue(names.queue));
      await this.check(`exchange "${names.deadLetterExchange}"`, (ch) =>
        ch.checkExchange(names.deadLetterExchange),
      );
      return names;
    }
    const deadLetters = source + this.settings.deadLetterSuffix;
    await this.exchange(source);
    await this.exchange(deadLetters);
    await this.queue(names.deadLetterQueue, deadLetters);
    await this.queue(names.queue, source);
    return names;
  }

  /** The tier queue a retry of `delayMs` waits in; it dead-letters back to `queue`. */
  async retryTier(queue: string, delayMs: number): Promise<RetryTier> {
    const choice = chooseTier(this.settings.retryTiersMs, delayMs);
    const tierQueue = tierQueueName(queue, choice.tierMs);
    if (this.settings.declare) {
      const quorum = this.settings.queueType === 'quorum';
      await this.once(`queue:${tierQueue}`, (ch) =>
        ch.assertQueue(tierQueue, {
          durable: true,
          arguments: {
            'x-queue-type': this.settings.queueType,
            'x-message-ttl': choice.tierMs,
            // Expired copies go back to the source queue through the default exchange.
            'x-dead-letter-exchange': '',
            'x-dead-letter-routing-key': queue,
            // A quorum queue's default (at-most-once) dead-lettering may lose a message in
            // transit; at-least-once keeps it until the source queue has it (needs reject-publish).
            ...(quorum
              ? { 'x-dead-letter-strategy': 'at-least-once', 'x-overflow': 'reject-publish' }
              : {}),
          },
        }),
      );
    }
    return { ...choice, queue: tierQueue };
  }

  /**
   * A copy was confirmed into `tier` at `publishedAt` (epoch ms): should the broker keep it
   * there past its time, the sweeper moves it back to `queue`.
   */
  copyParked(tier: RetryTier, queue: string, publishedAt: number): void {
    this.sweeper.watch(tier.queue, queue, tier.tierMs, publishedAt);
  }

  /**
   * Looks at every retry tier of `queue` once its longest-kept copy would be overdue: copies a
   * consumer parked before it stopped (or crashed) are not left to the broker alone either.
   */
  watchTiersOf(queue: string): void {
    const now = Date.now();
    for (const tierMs of this.settings.retryTiersMs) {
      this.sweeper.watch(tierQueueName(queue, tierMs), queue, tierMs, now);
    }
  }

  /** Forgets what was declared: after a queue was deleted under us, say. */
  reset(): void {
    this.declared.clear();
  }

  /** Closes the declaration channel and stops watching tiers. */
  async close(): Promise<void> {
    this.sweeper.stop();
    const channel = this.channel;
    this.channel = undefined;
    this.declared.clear();
    if (channel)
      await closedWithin(() => channel.then((ch) => ch.close()), this.settings.rpcTimeoutMs);
  }

  /** A group queue of `destination`, bound to its exchange. */
  private queue(name: string, destination: string): Promise<void> {
    const { exchangeName, deadLetterSuffix, queueType } = this.settings;
    const args: Options.AssertQueue = {
      durable: true,
      arguments: {
        'x-queue-type': queueType,
        // What the broker itself dead-letters (a quorum delivery limit, a user's policy)
        // lands in the dead-letter destination too, instead of being dropped.
        'x-dead-letter-exchange': exchangeName(destination + deadLetterSuffix),
      },
    };
    return this.once(`queue:${name}`, async (ch) => {
      await ch.assertQueue(name, args);
      await ch.bindQueue(name, exchangeName(destination), '');
    });
  }

  /** Runs a declaration once per connection; a failed one is tried again next time. */
  private once(key: string, declare: (channel: Channel) => Promise<unknown>): Promise<void> {
    const current = this.connector.current;
    if (current) this.follow(current.generation);
    let pending = this.declared.get(key);
    if (!pending) {
      pending = this.run(key, declare);
      this.declared.set(key, pending);
      pending.catch(() => this.declared.delete(key));
    }
    return pending;
  }

  private async check(what: string, probe: (channel: Channel) => Promise<unknown>): Promise<void> {
    try {
      await this.onAdmin(`the check of ${what}`, probe);
    } catch (error) {
      if (error instanceof TransportUnavailableError) throw error;
      throw new TransportUnavailableError(
        `${what} does not exist (declare is false): ${describeAmqpError(error)}`,
        { cause: error, retriable: false },
      );
    }
  }

  private async run(key: string, declare: (channel: Channel) => Promise<unknown>): Promise<void> {
    try {
      await this.onAdmin(`the declaration of ${key.replace(':', ' "')}"`, declare);
    } catch (error) {
      const { code } = error as { code?: unknown };
      if (code === 406) {
        throw new TransportUnavailableError(
          `Declaring ${key.replace(':', ' "')}" was refused: it exists with other arguments ` +
            `(another queueType, say). Delete it, or use declare: false / queueName to adopt ` +
            `an existing topology. ${describeAmqpError(error)}`,
          { cause: error, retriable: false },
        );
      }
      throw error;
    }
  }

  /** A new connection: its channel and declarations start afresh (a restarted broker may lack them). */
  private follow(generation: number): void {
    if (generation === this.generation) return;
    this.generation = generation;
    this.channel = undefined;
    this.declared.clear();
  }

  /**
   * Runs `operation` on the declaration channel of the current connection (opened on demand).
   * An open or an operation left unanswered abandons that channel: the next one opens another.
   */
  private async onAdmin(
    what: string,
    operation: (channel: Channel) => Promise<unknown>,
  ): Promise<void> {
    const live = await this.connector.get();
    this.follow(live.generation);
    const opening = this.channel ?? this.open(live.model);
    const abandon = () => {
      if (this.channel === opening) this.channel = undefined;
      opening.then((ch) => ch.close()).catch(() => undefined);
    };
    const { rpcTimeoutMs } = this.settings;
    const channel = await answerWithin(opening, rpcTimeoutMs, 'a channel open', abandon);
    await answerWithin(operation(channel), rpcTimeoutMs, what, abandon);
  }

  private open(model: LiveConnection['model']): Promise<Channel> {
    const opening = Promise.resolve(model.createChannel());
    this.channel = opening;
    opening.then(
      (ch) => {
        ch.on('error', () => undefined); // reported through the failing call
        ch.on('close', () => {
          if (this.channel === opening) this.channel = undefined;
        });
      },
      () => {
        if (this.channel === opening) this.channel = undefined;
      },
    );
    return opening;
  }
}

/** The retry tier of `tierMs` for `queue`. */
function tierQueueName(queue: string, tierMs: number): string {
  return `${queue}.retry.${tierMs}`;
}
