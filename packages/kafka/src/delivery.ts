import type { Delivery, IncomingMessage, RejectOptions, RetryOptions } from '@idemq/core';
import { OnceSettlement } from '@idemq/core/adapter';
import { readHeaders } from './headers.js';
import type { LaneMessage, PartitionLane } from './partitionWorker.js';

/** What `message.raw` holds for a Kafka delivery. */
export interface KafkaRawMessage {
  topic: string;
  partition: number;
  offset: string;
  /** The record as the client fetched it. */
  record: LaneMessage['record'];
}

const EMPTY = new Uint8Array(0);

/**
 * The message a delivery carries. `attempt` is this process's count (retries it made, or the
 * retry topic's header): Kafka keeps none, and the engine's real count is the idempotency
 * record's. `redelivered` is true when the message was in the partition before this member took
 * it over (the previous owner may have had it) or when it comes back after a retry or release.
 */
export function incomingMessage(
  lane: PartitionLane,
  message: LaneMessage,
  requestIdHeader: string,
): IncomingMessage {
  const { record } = message;
  const { requestId, headers, contentType, cloudEvent } = readHeaders(
    record.headers,
    requestIdHeader,
  );
  const takenOver = lane.takeoverEnd !== undefined && message.offset < lane.takeoverEnd;
  const publishedAt = Number(record.timestamp);
  const raw: KafkaRawMessage = {
    topic: lane.topic,
    partition: lane.partition,
    offset: record.offset,
    record,
  };
  // Optional fields assigned, not spread: this object is built for every message.
  const incoming: IncomingMessage = {
    requestId,
    body: record.value ?? EMPTY,
    headers,
    source: lane.source,
    attempt: message.attempt,
    attemptSource: 'emulated',
    redelivered: message.redelivered || takenOver,
    raw,
  };
  if (record.key !== null) incoming.key = record.key.toString('utf8');
  if (contentType !== undefined) incoming.contentType = contentType;
  if (cloudEvent !== undefined) incoming.cloudEvent = cloudEvent;
  if (Number.isFinite(publishedAt) && publishedAt > 0) incoming.publishedAt = publishedAt;
  return incoming;
}

/** A message handed out to the consumer, as its subscription tracks it. */
export interface Handout {
  readonly lane: PartitionLane;
  readonly message: LaneMessage;
  /** `settling`: a dead letter or retry record is being produced; `void`: the lane ended first. */
  state: 'out' | 'settling' | 'done' | 'void';
}

/** What a delivery's verbs do, in its subscription: one host per subscription. */
export interface DeliveryHost {
  /** Done: its offset may be committed once those before it are. */
  finish(handout: Handout): void;
  /** Back to its lane at once. */
  giveBack(handout: Handout): void;
  /** Blocking retry (pause, seek back after the delay) or a record on the retry topic. */
  retry(handout: Handout, options: RetryOptions): Promise<void>;
  /** A record on the dead-letter topic (acks: -1), then done. */
  reject(handout: Handout, options: RejectOptions): Promise<void>;
  /** The fetch loop keeps the group session alive; a heartbeat only notices a rebalance sooner. */
  heartbeat(): Promise<void>;
}

/**
 * A delivery whose verbs go to its subscription, settled once through core's `OnceSettlement`:
 * one object per message, where a closure per verb cost half a dozen allocations more. Valid
 * while it is out and its partition still assigned: a revoked partition's deliveries settle
 * nothing (the new owner gets the messages again, and the store deduplicates them).
 */
export class KafkaDelivery extends OnceSettlement implements Delivery {
  constructor(
    private readonly host: DeliveryHost,
    private readonly handout: Handout,
    readonly message: IncomingMessage,
  ) {
    super();
  }

  protected isValid(): boolean {
    return this.handout.state === 'out' && this.handout.lane.state === 'active';
  }

  protected async brokerAck(): Promise<boolean> {
    this.host.finish(this.handout);
    return true;
  }

  protected async brokerRetry(options: RetryOptions): Promise<boolean> {
    await this.host.retry(this.handout, options);
    return true;
  }

  protected async brokerReject(options: RejectOptions): Promise<boolean> {
    await this.host.reject(this.handout, options);
    return true;
  }

  protected async brokerRelease(): Promise<boolean> {
    this.host.giveBack(this.handout);
    return true;
  }

  protected async brokerExtendLease(): Promise<boolean> {
    await this.host.heartbeat();
    return true;
  }
}
