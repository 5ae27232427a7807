import { randomUUID } from 'node:crypto';
import { type Message, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Health, Logger, RejectOptions, SubscribeRequest, Subscription } from '@idemq/core';
import type { DeleteBatcher } from './deleteBatcher.js';
import {
  type DeliveryContext,
  Receipt,
  type Received,
  type SettledFate,
  SqsDelivery,
  toIncoming,
} from './delivery.js';
import { describeError, isFatal, TransportUnavailableError } from './errors.js';
import { GroupGate } from './groupGate.js';
import type { QueueRef } from './queues.js';
import { changeVisibility, giveBack } from './visibility.js';

/** Most messages one `ReceiveMessage` returns. */
const MAX_RECEIVE = 10;
/** Most receives one subscription keeps in flight (each holds an HTTP connection). */
const MAX_POLLS = 10;
/** First and longest pause after a failed receive; doubles in between. */
const BACKOFF_MIN_MS = 100;
const BACKOFF_MAX_MS = 5_000;
/** Pause after an empty short poll (`waitTimeMs: 0`), so an idle queue is not polled hot. */
const IDLE_SHORT_POLL_MS = 200;

/**
 * A receive that has not answered this long after its wait time is given up and polled again.
 * ElasticMQ never answers a long poll whose queue is deleted during the wait (12 of 20 tries).
 */
const HUNG_RECEIVE_MS = 10_000;
/** Longest time assumed between SQS taking a message for a poll and the answer arriving here. */
const ANSWER_LATENCY_MS = 250;

/**
 * When a received message's visibility surely started, as far as this process can tell. SQS
 * starts it when it hands the message to the poll: after the request was sent, but with a long
 * poll possibly long after (a message that arrives during the wait is answered at once). So the
 * answer's arrival, less a latency allowance (at most a quarter of the visibility), never earlier
 * than the request.
 */
export function visibilityStart(sentAt: number, answeredAt: number, visibilityMs: number): number {
  return Math.max(sentAt, answeredAt - Math.min(ANSWER_LATENCY_MS, visibilityMs / 4));
}

/** System attributes every receive asks for. */
const SYSTEM_ATTRIBUTES = [
  'ApproximateReceiveCount',
  'SentTimestamp',
  'MessageGroupId',
  'MessageDeduplicationId',
  'SequenceNumber',
] as const;

/** What a subscription needs from its connection. */
export interface ReceiverDeps {
  readonly client: SQSClient;
  readonly deleter: DeleteBatcher;
  readonly queue: QueueRef;
  /** How long a receive keeps messages invisible, in ms (the queue's or the option's). */
  readonly visibilityMs: number;
  /** Visibility asked for on each receive; `undefined`: the queue's default. */
  readonly receiveVisibilitySeconds: number | undefined;
  readonly waitTimeSeconds: number;
  readonly logger: Logger;
  connectionOpen(): boolean;
  deadLetter(message: Message, source: string, options: RejectOptions): Promise<void>;
  onClosed(subscription: SqsSubscription): void;
}

/**
 * The receive loop of one subscription.
 *
 * Capacity: `maxInFlight` bounds deliveries handed out and unsettled, plus messages waiting
 * behind their FIFO group, plus what in-flight polls asked for. A poll asks for at most the free
 * slots (≤ 10), and up to ⌈maxInFlight / 10⌉ polls run at once, so a receive never brings more
 * than there is room for (at most 10 polls per subscription).
 *
 * Shutdown: a long poll is never aborted on a graceful stop, since SQS may
 * already have handed it messages that would then stay invisible until their timeout. `stop()`
 * issues no new receive and gives back what a returning poll brings; `close()` also gives back
 * every unsettled delivery and waits for the polls to return (≤ `waitTimeMs`). Only the
 * connection's `close()` (a crash, by contract) aborts polls.
 */
export class SqsSubscription implements Subscription {
  private state: 'running' | 'stopped' | 'closed' = 'running';
  private crashed = false;
  /** Slots promised to polls in flight. */
  private reserved = 0;
  /** Messages leaving their group's queue whose visibility is being renewed. */
  private renewing = 0;
  /** Deliveries handed out and not settled yet, by receipt. */
  private readonly handedOut = new Map<Receipt, SqsDelivery>();
  private readonly polls = new Set<Promise<void>>();
  private readonly aborters = new Set<AbortController>();
  private readonly gate: GroupGate<Received> | undefined;
  /** What every delivery of this subscription shares. */
  private readonly deliveryContext: DeliveryContext;
  private readonly maxPolls: number;
  private failures = 0;
  /** Why the last receive failed, while receives keep failing (for health()). */
  private lastFailure: string | undefined;
  /** A receive failed for good (queue gone, access denied): the subscription stopped. */
  private fatal: string | undefined;
  private pumpScheduled = false;
  private pause: NodeJS.Timeout | undefined;
  private closing: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly deps: ReceiverDeps,
    private readonly request: SubscribeRequest,
  ) {
    this.gate = deps.queue.fifo
      ? new GroupGate<Received>((item) => !item.receipt.held())
      : undefined;
    this.maxPolls = Math.min(MAX_POLLS, Math.ceil(request.maxInFlight / MAX_RECEIVE));
    this.deliveryContext = {
      client: deps.client,
      deleter: deps.deleter,
      queue: deps.queue,
      source: request.source,
      isOpen: () => this.state !== 'closed' && this.deps.connectionOpen(),
      deadLetter: (original, options) => this.deps.deadLetter(original, request.source, options),
      onSettled: (received, fate) => this.settled(received, fate),
    };
  }

  /** Starts polling. */
  start(): void {
    this.pump();
  }

  stop(): Promise<void> {
    if (!this.stopping) {
      this.stopping = this.state === 'running' ? this.halt() : Promise.resolve();
    }
    return this.stopping;
  }

  close(): Promise<void> {
    if (!this.closing) this.closing = this.shutDown();
    return this.closing;
  }

  health(): Health {
    if (this.fatal) return { status: 'down', reason: `receive failed for good: ${this.fatal}` };
    if (this.crashed) return { status: 'down', reason: 'connection closed' };
    if (this.state !== 'running') return { status: 'down', reason: this.state };
    if (this.failures > 0) {
      return { status: 'degraded', reason: `receives failing, retrying: ${this.lastFailure}` };
    }
    return { status: 'up' };
  }

  /**
   * The connection died (its `close()`): like a crashed process, give nothing back: unsettled
   * messages reappear when their visibility lapses. Polls are aborted.
   */
  crash(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.crashed = true;
    this.clearPause();
    for (const aborter of this.aborters) aborter.abort();
    this.handedOut.clear();
    this.gate?.drain();
    this.deps.onClosed(this);
  }

  private async halt(): Promise<void> {
    this.state = 'stopped';
    this.clearPause();
    // Messages waiting behind their group were never handed out: give them back now.
    await this.giveBackItems(this.gate?.drain() ?? []);
  }

  private async shutDown(): Promise<void> {
    await this.stop();
    if (this.state === 'closed') return;
    this.state = 'closed';
    const unsettled = [...this.handedOut].filter(([, delivery]) => !delivery.settled);
    this.handedOut.clear();
    await this.giveBackReceipts(unsettled.map(([receipt]) => receipt));
    // Polls still out give back what they bring (state is no longer running).
    await Promise.allSettled([...this.polls]);
    this.deps.onClosed(this);
  }

  private free(): number {
    const waiting = this.gate?.waiting ?? 0;
    return this.request.maxInFlight - this.reserved - this.renewing - this.handedOut.size - waiting;
  }

  /**
   * Starts as many polls as capacity and the poll limit allow. While a poll is out, another
   * waits for a full receive's worth of free slots: a `ReceiveMessage` costs the broker about as
   * much as the messages it brings, so one per settled delivery would double its work.
   */
  private pump(): void {
    const fullReceive = Math.min(MAX_RECEIVE, this.request.maxInFlight);
    while (this.state === 'running' && !this.pause && this.polls.size < this.maxPolls) {
      const count = Math.min(MAX_RECEIVE, this.free());
      if (count < 1 || (count < fullReceive && this.polls.size > 0)) return;
      this.reserved += count;
      const poll: Promise<void> = this.poll(count)
        .catch((error: unknown) => this.unexpected(error))
        .finally(() => {
          this.polls.delete(poll);
          this.pump();
        });
      this.polls.add(poll);
    }
  }

  private async poll(count: number): Promise<void> {
    const { client, queue } = this.deps;
    const sentAt = performance.now();
    // One controller per poll (not AbortSignal.any on a long-lived signal, which Node 20 can
    // leak); crash() aborts them all.
    const aborter = new AbortController();
    this.aborters.add(aborter);
    const guard = setTimeout(
      () => aborter.abort(new Error('ReceiveMessage did not answer')),
      this.deps.waitTimeSeconds * 1_000 + HUNG_RECEIVE_MS,
    );
    guard.unref();
    let messages: Message[];
    try {
      const answer = await client.send(
        new ReceiveMessageCommand({
          QueueUrl: queue.url,
          MaxNumberOfMessages: count,
          WaitTimeSeconds: this.deps.waitTimeSeconds,
          MessageAttributeNames: ['All'],
          MessageSystemAttributeNames: [...SYSTEM_ATTRIBUTES],
          ...(this.deps.receiveVisibilitySeconds === undefined
            ? {}
            : { VisibilityTimeout: this.deps.receiveVisibilitySeconds }),
          // FIFO: an SDK retry after a network error gets the same batch back instead of
          // leaving it invisible (and its groups blocked) until the visibility lapses.
          ...(queue.fifo ? { ReceiveRequestAttemptId: randomUUID() } : {}),
        }),
        // Aborted only by the connection's close() (a crash), or by a guard against a request
        // that never answers; a graceful stop lets the poll return by itself.
        { abortSignal: aborter.signal },
      );
      messages = answer.Messages ?? [];
      this.failures = 0;
    } catch (error) {
      this.reserved -= count;
      if (this.crashed) return;
      this.onReceiveError(error);
      return;
    } finally {
      clearTimeout(guard);
      this.aborters.delete(aborter);
    }
    this.reserved -= count;
    if (this.crashed) return;
    const visibleFrom = visibilityStart(sentAt, performance.now(), this.deps.visibilityMs);
    const items = messages.map((message) => ({
      message,
      receipt: new Receipt(
        queue.url,
        message.ReceiptHandle ?? '',
        sentAt,
        visibleFrom + this.deps.visibilityMs,
      ),
      group: queue.fifo ? message.Attributes?.MessageGroupId : undefined,
    }));
    if (this.state !== 'running') {
      // Stopped while the poll was out: nothing more is handed out; these go straight back.
      await this.giveBackItems(items);
      return;
    }
    for (const item of items) {
      if (item.group === undefined || !this.gate) {
        this.hand(item);
        continue;
      }
      const { next, giveBack: back } = this.gate.admit(item.group, item);
      if (back.length > 0) void this.giveBackItems(back);
      if (next) this.hand(next);
    }
    if (messages.length === 0 && this.deps.waitTimeSeconds === 0) this.pauseFor(IDLE_SHORT_POLL_MS);
  }

  private onReceiveError(error: unknown): void {
    if (isFatal(error)) {
      this.fatal = describeError(error);
      this.deps.logger.error(
        { queue: this.deps.queue.name, error: describeError(error) },
        'idemq sqs: receive failed for good; the subscription stops',
      );
      void this.stop();
      this.request.onError?.(
        new TransportUnavailableError(
          `SQS: receiving from ${this.deps.queue.name} failed for good: ${describeError(error)}`,
          { cause: error, retriable: false },
        ),
      );
      return;
    }
    this.failures += 1;
    this.lastFailure = describeError(error);
    const delayMs = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** (this.failures - 1));
    this.deps.logger.warn(
      { queue: this.deps.queue.name, error: describeError(error), retryInMs: delayMs },
      'idemq sqs: receive failed; polling again after a pause',
    );
    this.pauseFor(delayMs);
  }

  /** Hands a message to the subscriber. */
  private hand(item: Received): void {
    const incoming = toIncoming(item.message, this.request.source, this.deps.queue.fifo);
    const delivery = new SqsDelivery(this.deliveryContext, item, incoming);
    this.handedOut.set(item.receipt, delivery);
    try {
      this.request.onDelivery(delivery);
    } catch (error) {
      // The subscriber's callback failed; the delivery stays theirs to settle (or to lapse).
      this.deps.logger.error(
        { queue: this.deps.queue.name, error: describeError(error) },
        'idemq sqs: onDelivery threw',
      );
    }
  }

  private settled(item: Received, fate: SettledFate): void {
    this.handedOut.delete(item.receipt);
    if (item.group !== undefined && this.gate) {
      const { next, giveBack: back } = this.gate.settled(item.group, item, fate);
      if (back.length > 0) void this.giveBackItems(back);
      if (next) this.handAfterWaiting(next).catch((error: unknown) => this.unexpected(error));
    }
    this.pumpSoon();
  }

  /**
   * Pumps at the end of this event-loop turn: settlements come in bursts (the acks of one
   * `DeleteMessageBatch` answer together), and pumping on the first would start a receive for
   * one message.
   */
  private pumpSoon(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  /**
   * Hands out a message that waited behind its group. Its visibility ran on meanwhile, so it is
   * renewed first; if SQS no longer knows the receipt, the group's turn passes to SQS again.
   */
  private async handAfterWaiting(item: Received): Promise<void> {
    const { client, queue, visibilityMs } = this.deps;
    const sentAt = performance.now();
    const seconds = Math.min(Math.ceil(visibilityMs / 1000), item.receipt.maxSecondsLeft(sentAt));
    // Still occupies its slot while the renewal is in flight.
    this.renewing += 1;
    let renewed = false;
    if (item.receipt.held(sentAt) && seconds > 0) {
      try {
        renewed =
          (await changeVisibility(client, queue.url, item.receipt.handle, seconds)) === 'changed';
      } catch {
        renewed = false;
      }
    }
    this.renewing -= 1;
    if (renewed) item.receipt.deadline = sentAt + seconds * 1000;
    if (this.state !== 'running') {
      if (renewed) await this.giveBackItems([item]);
      this.releaseGroup(item);
      return this.pump();
    }
    if (!renewed) {
      item.receipt.lost = true;
      this.releaseGroup(item);
      return this.pump();
    }
    this.hand(item);
  }

  /** The group's turn ends without a message in hand: the rest goes back to SQS. */
  private releaseGroup(item: Received): void {
    if (item.group === undefined || !this.gate) return;
    const { giveBack: back } = this.gate.settled(item.group, item, 'returned');
    if (back.length > 0) void this.giveBackItems(back);
  }

  /** A bug here must not become an unhandled rejection that ends the process. */
  private unexpected(error: unknown): void {
    this.deps.logger.error(
      { queue: this.deps.queue.name, error: describeError(error) },
      'idemq sqs: unexpected error in the receive loop',
    );
  }

  private giveBackItems(items: readonly Received[]): Promise<void> {
    return this.giveBackReceipts(items.map((item) => item.receipt));
  }

  /** Makes messages visible again now; best effort (they reappear after the timeout anyway). */
  private async giveBackReceipts(receipts: readonly Receipt[]): Promise<void> {
    const held = receipts.filter((receipt) => receipt.held());
    if (held.length === 0 || this.crashed || !this.deps.connectionOpen()) return;
    const failed = await giveBack(
      this.deps.client,
      this.deps.queue.url,
      held.map((receipt) => receipt.handle),
    );
    if (failed > 0) {
      this.deps.logger.warn(
        { queue: this.deps.queue.name, failed },
        'idemq sqs: could not give messages back; they reappear after their visibility timeout',
      );
    }
  }

  private pauseFor(ms: number): void {
    this.clearPause();
    // Not unref'd: a running subscription keeps the process alive, as its open long poll does;
    // stop(), close() and the connection's close() clear it.
    this.pause = setTimeout(() => {
      this.pause = undefined;
      this.pump();
    }, ms);
  }

  private clearPause(): void {
    if (this.pause) clearTimeout(this.pause);
    this.pause = undefined;
  }
}
