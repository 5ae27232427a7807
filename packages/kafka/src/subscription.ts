import type {
  Health,
  Logger,
  RejectOptions,
  RetryOptions,
  SubscribeRequest,
  Subscription,
} from '@idemq/core';
import type {
  AdminClient,
  ConsumerClient,
  ConsumerSettings,
  FetchedBatch,
  FetchedMessage,
  GroupJoin,
  KafkaClient,
  ProducerClient,
} from './client.js';
import { Committer } from './committer.js';
import { deadLetterRecord } from './deadLetter.js';
import { type DeliveryHost, type Handout, incomingMessage, KafkaDelivery } from './delivery.js';
import { isCoordinatorInTransition, joinError } from './errors.js';
import { type LaneMessage, PartitionLane } from './partitionWorker.js';
import { type RetryMode, readRetryHeaders, retryRecord } from './retry.js';

/** What one subscription needs to know, resolved from the transport's options. */
export interface SubscriptionSettings {
  source: string;
  /** Set in `topic` retry mode: the retry topic the subscription also consumes. */
  retryTopic: string | undefined;
  deadLetterTopic: string;
  retryMode: RetryMode;
  fromBeginning: boolean;
  partitionConcurrency: number;
  maxBufferedPerPartition: number;
  commitIntervalMs: number;
  requestIdHeader: string;
  consumer: Omit<ConsumerSettings, 'restartOnFailure'>;
}

export interface SubscriptionDeps {
  client: KafkaClient;
  producer(): ProducerClient;
  logger: Logger;
  /** Called once the subscription is closed. */
  onClosed(subscription: KafkaSubscription): void;
}

/** The takeover point when the partition's end could not be read: everything may be redelivered. */
const UNKNOWN_END = 2n ** 63n - 1n;

/**
 * Rejoins allowed while the first join answers "coordinator in transition"; each waits kafkajs's
 * restart delay (300 ms). Any other failure of the first join ends `open` at once.
 */
const FIRST_JOIN_RESTARTS = 5;

/**
 * One consumer group member on one source (and its retry topic): keeps a lane per assigned
 * partition, hands messages out across lanes oldest first up to `maxInFlight`, maps the settlement
 * verbs to Kafka (commit, retry, dead letter), and follows the group through rebalances.
 *
 * Rebalances (kafkajs is eager: every partition is revoked and reassigned):
 * - a partition this member keeps, under the same member id, carries over: its deliveries stay
 *   valid and its watermark goes on (no other member can have owned it in between);
 * - a partition it loses is revoked at once: its unsettled deliveries resolve `false` and nothing
 *   of it is committed again; the new owner starts from the last commit, and the store skips what
 *   was completed;
 * - when the rebalance is announced, what is done is committed under the ending generation.
 */
export class KafkaSubscription implements Subscription, DeliveryHost {
  private readonly consumer: ConsumerClient;
  private readonly committer: Committer;
  private readonly lanes = new Map<string, PartitionLane>();
  private readonly handouts = new Set<Handout>();
  /** Dead-letter and retry-topic produces in flight; close waits for them. */
  private readonly producing = new Set<Promise<unknown>>();
  private readonly topics: string[];
  private memberId: string | undefined;
  private inFlight = 0;
  private arrivals = 0;
  private started = false;
  private firstJoinRestarts = 0;
  private stopped = false;
  /** Where the group membership stands, for health(). */
  private membership: 'joining' | 'joined' | 'rebalancing' | 'restarting' = 'joining';
  /** The consumer crashed and kafkajs does not restart it. */
  private failure: Error | undefined;
  private closing: Promise<void> | undefined;
  /** Opened on first use by `ownAdmin()`, closed with the subscription. */
  private admin: AdminClient | undefined;
  private takeover: Promise<void> = Promise.resolve();
  private pumpScheduled = false;
  private wakeTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly request: SubscribeRequest,
    private readonly settings: SubscriptionSettings,
    private readonly deps: SubscriptionDeps,
  ) {
    this.topics = [settings.source, ...(settings.retryTopic ? [settings.retryTopic] : [])];
    this.consumer = deps.client.consumer({
      ...settings.consumer,
      // No restart while closing: it would rejoin the group after close() returned.
      restartOnFailure: (error) => !this.closing && (this.started || this.mayRetryFirstJoin(error)),
    });
    this.committer = new Committer(
      (offsets) => this.consumer.commit(offsets),
      deps.logger,
      settings.commitIntervalMs,
    );
  }

  /** Joins the group; resolves once the first assignment is known and may be consumed. */
  async open(): Promise<void> {
    await this.consumer
      .start(this.topics, this.settings.fromBeginning, {
        eachBatch: async (batch) => this.onBatch(batch),
        onGroupJoin: (join) => this.onGroupJoin(join),
        onRebalancing: () => this.onRebalancing(),
        onCrash: (error, restarting) => this.onCrash(error, restarting),
      })
      .catch((error: unknown) => {
        throw joinError(this.topics, error);
      });
    this.started = true;
    await this.takeover;
  }

  /** Before `open` resolved, only a coordinator in transition is worth joining again. */
  private mayRetryFirstJoin(error: Error): boolean {
    return isCoordinatorInTransition(error) && this.firstJoinRestarts++ < FIRST_JOIN_RESTARTS;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.wakeTimer);
    for (const topic of this.topics) this.consumer.pause(topic);
  }

  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  health(): Health {
    if (this.closing) return { status: 'down', reason: 'closed' };
    if (this.stopped) return { status: 'down', reason: 'stopped' };
    if (this.failure) return { status: 'down', reason: `crashed: ${this.failure.message}` };
    switch (this.membership) {
      case 'joined':
        return { status: 'up' };
      case 'joining':
        return { status: 'degraded', reason: 'joining the consumer group' };
      case 'rebalancing':
        return { status: 'degraded', reason: 'the consumer group is rebalancing' };
      case 'restarting':
        return { status: 'degraded', reason: 'restarting after a crash' };
    }
  }

  private async shutDown(): Promise<void> {
    await this.stop();
    // Unsettled deliveries go back to the group: they can no longer be settled here.
    for (const lane of this.lanes.values()) this.endLane(lane, 'closing');
    await Promise.allSettled([...this.producing]);
    await this.committer.flush();
    for (const lane of this.lanes.values()) lane.end('revoked');
    this.committer.close();
    await this.consumer.stop().catch((error: unknown) => {
      this.deps.logger.warn({ error: String(error) }, 'idemq kafka: consumer disconnect failed');
    });
    await this.admin?.close().catch(() => undefined);
    this.deps.onClosed(this);
  }

  private onGroupJoin(join: GroupJoin): void {
    this.membership = 'joined';
    const sameMember = join.memberId === this.memberId;
    this.memberId = join.memberId;
    const assigned = new Set<string>();
    for (const [topic, partitions] of Object.entries(join.assignment)) {
      for (const partition of partitions) assigned.add(laneKey(topic, partition));
    }
    for (const [key, lane] of this.lanes) {
      if (sameMember && assigned.has(key) && lane.state === 'active') continue;
      this.endLane(lane, 'revoked');
      this.lanes.delete(key);
      // A partition paused because its buffer was full must not stay paused if it comes back.
      if (lane.paused && !this.stopped) this.consumer.resume(lane.topic, [lane.partition]);
    }
    const fresh: PartitionLane[] = [];
    for (const [topic, partitions] of Object.entries(join.assignment)) {
      for (const partition of partitions) {
        const kept = this.lanes.get(laneKey(topic, partition));
        if (kept) {
          // kafkajs starts the new generation at the last commit: skip what is already here.
          const end = kept.fetchedEnd;
          if (end !== undefined) this.consumer.seek(topic, partition, end.toString());
          continue;
        }
        const lane = new PartitionLane(
          topic,
          partition,
          this.settings.source,
          topic === this.settings.retryTopic,
          { concurrency: this.settings.partitionConcurrency },
        );
        this.lanes.set(laneKey(topic, partition), lane);
        fresh.push(lane);
      }
    }
    if (this.stopped) for (const topic of this.topics) this.consumer.pause(topic);
    this.committer.resume();
    this.takeover = this.learnTakeover(fresh);
  }

  /**
   * This subscription's own admin client, opened on first use. Not the transport's shared one:
   * kafkajs asks metadata for every topic a client ever looked up, and once one of them is
   * deleted each refresh fails and is retried for a minute (kafkajs #651, #1622) — a new
   * subscription must not inherit the topics of subscriptions before it.
   */
  private ownAdmin(): AdminClient {
    this.admin ??= this.deps.client.admin();
    return this.admin;
  }

  /** Learns where each new partition ended when this member took it over (for `redelivered`). */
  private async learnTakeover(lanes: readonly PartitionLane[]): Promise<void> {
    const topics = new Set(lanes.map((lane) => lane.topic));
    await Promise.all(
      [...topics].map(async (topic) => {
        let ends: Map<number, bigint> | undefined;
        try {
          const watermarks = await withRetries(() => this.ownAdmin().watermarks(topic));
          ends = new Map([...watermarks].map(([partition, { high }]) => [partition, high]));
        } catch (error) {
          // Unknown: every message counts as possibly delivered before, which is never wrong.
          this.deps.logger.warn(
            { topic, error: String(error) },
            'idemq kafka: could not read partition ends; deliveries are marked redelivered',
          );
        }
        for (const lane of lanes) {
          if (lane.topic === topic) lane.takeoverEnd = ends?.get(lane.partition) ?? UNKNOWN_END;
        }
      }),
    );
    this.schedulePump();
  }

  private onRebalancing(): void {
    this.membership = 'rebalancing';
    // The last moment the ending generation may commit: the rejoin has not been sent yet.
    this.committer.commitNow();
    this.committer.suspend();
  }

  private onCrash(error: Error, restarting: boolean): void {
    this.deps.logger.warn(
      { error: error.message, restarting, group: this.settings.consumer.groupId },
      'idemq kafka: consumer crashed',
    );
    if (this.closing) return;
    if (restarting) {
      this.membership = 'restarting';
      return;
    }
    this.failure = error;
    for (const lane of this.lanes.values()) this.endLane(lane, 'revoked');
    this.request.onError?.(error);
  }

  private async onBatch(batch: FetchedBatch): Promise<void> {
    const lane = this.lanes.get(laneKey(batch.topic, batch.partition));
    // Not (or no longer) ours: leave the fetch position alone.
    if (lane?.state !== 'active') return;
    lane.accept(
      batch.messages.map((record) => this.laneMessage(lane, record)),
      BigInt(batch.lastOffset),
    );
    batch.resolveOffset(batch.lastOffset);
    // Passed-over records (other groups' retries) may have moved the watermark.
    if (lane.needsCommit) this.committer.request(lane);
    if (!lane.paused && lane.buffered >= this.settings.maxBufferedPerPartition) {
      lane.paused = true;
      this.consumer.pause(lane.topic, [lane.partition]);
    }
    this.schedulePump();
  }

  private laneMessage(lane: PartitionLane, record: FetchedMessage): LaneMessage {
    const timestampMs = Number(record.timestamp);
    const retried = lane.isRetryTopic ? readRetryHeaders(record.headers) : undefined;
    return {
      offset: BigInt(record.offset),
      record,
      seq: ++this.arrivals,
      timestampMs: Number.isFinite(timestampMs) ? timestampMs : 0,
      attempt: retried?.attempt ?? 1,
      redelivered: retried !== undefined,
      notBefore: retried?.notBefore ?? 0,
      ...(retried && retried.groupId !== this.settings.consumer.groupId ? { foreign: true } : {}),
    };
  }

  private schedulePump(): void {
    if (this.pumpScheduled || this.stopped) return;
    this.pumpScheduled = true;
    // A later macrotask: never hand out from inside a settlement call or a kafkajs callback.
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  /** Hands out messages, oldest first across partitions, while there is room. */
  private pump(): void {
    if (this.stopped) return;
    const now = Date.now();
    let wakeAt = Number.POSITIVE_INFINITY;
    while (this.inFlight < this.request.maxInFlight) {
      let best: { lane: PartitionLane; message: LaneMessage } | undefined;
      for (const lane of this.lanes.values()) {
        const next = lane.next(now);
        if (next === undefined) continue;
        if (typeof next === 'number') {
          wakeAt = Math.min(wakeAt, next);
          continue;
        }
        if (!best || older(next, best.message)) best = { lane, message: next };
      }
      if (!best) break;
      this.handOut(best.lane, best.lane.take());
      const { lane } = best;
      if (lane.paused && lane.buffered * 2 <= this.settings.maxBufferedPerPartition) {
        lane.paused = false;
        this.consumer.resume(lane.topic, [lane.partition]);
      }
    }
    clearTimeout(this.wakeTimer);
    if (wakeAt !== Number.POSITIVE_INFINITY) {
      this.wakeTimer = setTimeout(() => this.schedulePump(), Math.max(0, wakeAt - now));
      this.wakeTimer.unref();
    }
  }

  private handOut(lane: PartitionLane, message: LaneMessage): void {
    const handout: Handout = { lane, message, state: 'out' };
    this.handouts.add(handout);
    this.inFlight += 1;
    const delivery = new KafkaDelivery(
      this,
      handout,
      incomingMessage(lane, message, this.settings.requestIdHeader),
    );
    try {
      this.request.onDelivery(delivery);
    } catch (thrown) {
      // The delivery stays out (a hot loop is worse): its offset is not committed, so the next
      // owner of the partition gets it again.
      const error = thrown instanceof Error ? thrown : new Error(String(thrown));
      this.deps.logger.error({ error: error.message }, 'idemq kafka: onDelivery threw');
      this.request.onError?.(error);
    }
  }

  /** The message is done: its offset may be committed once those before it are. */
  finish(handout: Handout): void {
    if (!this.free(handout)) return;
    if (handout.lane.complete(handout.message)) this.committer.request(handout.lane);
    this.schedulePump();
  }

  /** Back to its lane at once (release, or a failed dead-letter / retry produce). */
  giveBack(handout: Handout): void {
    if (!this.free(handout)) return;
    handout.message.redelivered = true;
    handout.lane.giveBack(handout.message);
    this.schedulePump();
  }

  async retry(handout: Handout, options: RetryOptions): Promise<void> {
    const { lane, message } = handout;
    const delayMs = Math.max(0, options.delayMs ?? 0);
    if (this.settings.retryMode === 'topic' && this.settings.retryTopic) {
      const record = retryRecord(message, Date.now() + delayMs, this.settings.consumer.groupId);
      return this.produceThenFinish(handout, this.settings.retryTopic, record);
    }
    if (!this.free(handout)) return;
    message.attempt += 1;
    message.redelivered = true;
    if (delayMs === 0) lane.giveBack(message);
    else lane.hold(message, delayMs, () => this.schedulePump());
    this.schedulePump();
  }

  reject(handout: Handout, options: RejectOptions): Promise<void> {
    const { lane, message } = handout;
    const origin = { topic: lane.topic, partition: lane.partition, offset: message.record.offset };
    const record = deadLetterRecord(message.record, origin, lane.source, options, message.attempt);
    return this.produceThenFinish(handout, this.settings.deadLetterTopic, record);
  }

  /** Never fails: a heartbeat refused mid-rebalance changes nothing for the delivery. */
  async heartbeat(): Promise<void> {
    await this.consumer.heartbeat().catch(() => undefined);
  }

  /**
   * Produces (acks: -1) and only then commits past the message: committing first would lose it if
   * the produce failed. A failed produce gives the message back and rethrows.
   */
  private async produceThenFinish(
    handout: Handout,
    topic: string,
    record: Parameters<ProducerClient['send']>[1][number],
  ): Promise<void> {
    handout.state = 'settling';
    const sending = this.deps.producer().send(topic, [record]);
    this.producing.add(sending);
    try {
      await sending;
    } catch (error) {
      handout.state = 'out';
      this.giveBack(handout);
      throw error;
    } finally {
      this.producing.delete(sending);
    }
    handout.state = 'out';
    this.finish(handout);
  }

  /** Frees a handout's slot; false when its lane ended first (nothing more to do for it). */
  private free(handout: Handout): boolean {
    if (handout.state === 'void' || handout.state === 'done') return false;
    handout.state = 'done';
    this.handouts.delete(handout);
    this.inFlight -= 1;
    return true;
  }

  /** Ends a lane; its unsettled deliveries become unsettleable and free their slots. */
  private endLane(lane: PartitionLane, state: 'closing' | 'revoked'): void {
    lane.end(state);
    for (const handout of this.handouts) {
      if (handout.lane !== lane || handout.state !== 'out') continue;
      handout.state = 'void';
      this.handouts.delete(handout);
      this.inFlight -= 1;
    }
    this.schedulePump();
  }
}

/**
 * A new topic's partitions answer "not the leader" for a moment after creation, and a rebalance
 * can meet a leader change: try a few times (about 3 s in all) before giving up.
 */
async function withRetries<T>(call: () => Promise<T>, tries = 8): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (attempt >= tries) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}

function laneKey(topic: string, partition: number): string {
  return `${partition}:${topic}`;
}

function older(a: LaneMessage, b: LaneMessage): boolean {
  return a.timestampMs === b.timestampMs ? a.seq < b.seq : a.timestampMs < b.timestampMs;
}
