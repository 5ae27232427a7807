import { type ErrorCode, ErrorCodes } from '../errors/codes.js';
import { isIdemqError } from '../errors/idemqError.js';
import { OversizedPayloadError, toError } from '../errors/index.js';
import type { EventHub } from '../observability/events.js';
import type { Delivery } from '../transport/transport.js';
import type { Abandonment } from './abandonment.js';
import { type BatchMember, BatchOpener } from './batchCall.js';
import { type Decision, type DecisionPolicy, decide } from './decide.js';
import type { DeliverySettler, RejectCause } from './deliverySettler.js';
import type { ProcessDelivery } from './dispatch.js';
import { type ExecuteSettings, type Execution, execute } from './execute.js';
import { readPayload, readRequestId } from './readMessage.js';
import type { BatchHandler, ConsumedMessage, ConsumerOptions, Handler } from './types.js';

/** What the decision-and-settle step needs besides the message. */
export interface DeliveryStep<T, R> {
  options: Pick<
    ConsumerOptions<T, R>,
    'handler' | 'batchHandler' | 'decode' | 'schema' | 'deriveRequestId' | 'requestIdFrom'
  >;
  settings: ExecuteSettings;
  decisionPolicy: DecisionPolicy;
  maxRequestIdBytes: number;
  /** Larger bodies are dead-lettered undecoded; undefined: no limit. */
  maxPayloadBytes: number | undefined;
  source: string;
  events: EventHub;
  settler: DeliverySettler;
}

/**
 * The consumer's decision-and-settle step for one delivery: read the requestId and payload,
 * claim and run the handler and record its outcome (`execute`), decide (`decide`), then settle
 * the delivery and report the event. With a batch handler, the handler's place is taken by the
 * delivery's share of a `BatchCall`.
 */
export function processDelivery<T, R>(step: DeliveryStep<T, R>): ProcessDelivery {
  const { options } = step;
  const { handler, batchHandler } = options;
  if (handler) return (delivery, abandon) => processOne(step, delivery, abandon, handler);
  // With a batch handler, the deliveries that start in one turn share one call of it.
  const batches = new BatchOpener(batchHandler as BatchHandler<T, R>);
  return async (delivery, abandon) => {
    const member = batches.enter();
    try {
      await processOne(
        step,
        delivery,
        abandon,
        (message, ctx) => member.join(message, ctx),
        member,
      );
    } finally {
      member.leave();
    }
  };
}

/** One delivery from its message to its settlement, `run` standing where the handler runs. */
async function processOne<T, R>(
  step: DeliveryStep<T, R>,
  delivery: Delivery,
  abandon: Abandonment,
  run: Handler<T, R>,
  member?: BatchMember<T, R>,
): Promise<void> {
  const { options, settings, source, events, settler } = step;
  const { message } = delivery;
  let requestId: string;
  let value: T;
  try {
    requestId = readRequestId(
      message,
      step.maxRequestIdBytes,
      options.deriveRequestId,
      options.requestIdFrom,
    );
  } catch (thrown) {
    const cause = causeOf(thrown, ErrorCodes.REQUEST_ID_INVALID);
    // Out of the batch call before settling: the call need not wait for this broker round trip.
    member?.leave();
    return settler.reject(delivery, undefined, cause, undefined);
  }
  const { maxPayloadBytes } = step;
  if (maxPayloadBytes !== undefined && message.body.byteLength > maxPayloadBytes) {
    const tooLarge = new OversizedPayloadError(message.body.byteLength, maxPayloadBytes);
    member?.leave();
    return settler.reject(delivery, requestId, causeOf(tooLarge, tooLarge.code), undefined);
  }
  try {
    const read = readPayload(message, options.decode, options.schema);
    // Awaited only when a schema validates asynchronously: an await is a microtask turn.
    value = read instanceof Promise ? await read : (read as T);
  } catch (thrown) {
    const cause = causeOf(thrown, ErrorCodes.PAYLOAD_MALFORMED);
    member?.leave();
    return settler.reject(delivery, requestId, cause, undefined);
  }

  const consumed: ConsumedMessage<T> = {
    requestId,
    value,
    body: message.body,
    headers: message.headers,
    source: message.source,
    deliveryAttempt: message.attempt,
    redelivered: message.redelivered,
    raw: message.raw,
  };
  if (message.key !== undefined) consumed.key = message.key;
  const startedAt = performance.now();
  let brokerLeaseLost = false;
  const execution: Execution<R> = await execute(settings, requestId, (ctx) => run(consumed, ctx), {
    payload: message.body,
    abandon,
    unclaimedAttempt: message.attempt,
    onLeaseRenewed: async (leaseMs) => {
      events.emit('lease-extended', { requestId, source, leaseMs });
      const extended = await delivery.extendLease(leaseMs).catch(() => false);
      // The broker no longer holds the message for us (an SQS receipt handle gone, a lapsed
      // visibility): another consumer may have it. The store claim still fences the work,
      // so the handler goes on; its redelivered copy will be a duplicate.
      if (!extended && !delivery.settled && !brokerLeaseLost) {
        brokerLeaseLost = true;
        events.emit('lease-lost', {
          requestId,
          source,
          attempt: message.attempt,
          lease: 'broker',
        });
      }
    },
  });
  const durationMs = performance.now() - startedAt;
  member?.leave();
  if (execution.kind === 'store-error' || execution.kind === 'processed-unclaimed') {
    const error = execution.kind === 'store-error' ? execution.error : execution.storeError;
    events.emit('store-error', { requestId, source, error });
  }
  const decision = decide(execution, step.decisionPolicy);
  return settleDecision(step, delivery, requestId, execution, decision, durationMs);
}

/** Settles the delivery as decided, then reports the event the decision names. */
async function settleDecision<T, R>(
  step: DeliveryStep<T, R>,
  delivery: Delivery,
  requestId: string,
  execution: Execution<R>,
  decision: Decision,
  durationMs: number,
): Promise<void> {
  const { source, events, settler } = step;
  switch (decision.verb) {
    case 'ack':
      // The record is what counts: even when the ack no longer lands, the redelivery will be
      // a duplicate, so `processed` / `duplicate` report the record, not the ack.
      await settler.settle(() => delivery.ack());
      if (decision.event === 'processed') {
        const attempt =
          execution.kind === 'processed' || execution.kind === 'processed-unclaimed'
            ? execution.attempt
            : 1;
        events.emit('processed', { requestId, source, attempt, durationMs });
        if (execution.kind === 'processed' && execution.unstored) {
          const { reason, error } = execution.unstored;
          const scope = step.settings.scope;
          events.emit('result-omitted', { requestId, scope, source, reason, error });
        }
      } else {
        events.emit('duplicate', { requestId, source });
      }
      return;
    case 'retry':
      if (!(await settler.settle(() => delivery.retry({ delayMs: decision.delayMs })))) return;
      if (decision.event === 'in-progress') {
        events.emit('in-progress', { requestId, source, retryAfterMs: decision.delayMs });
      } else if (decision.event === 'retry' && execution.kind === 'failed') {
        events.emit('retry', {
          requestId,
          source,
          attempt: execution.attempt,
          delayMs: decision.delayMs,
          error: execution.error,
        });
      }
      return;
    case 'reject':
      return settler.reject(delivery, requestId, decision, decision.attempt);
    case 'release':
      await settler.release(delivery);
      if (decision.event === 'lease-lost' && execution.kind === 'lease-lost') {
        events.emit('lease-lost', {
          requestId,
          source,
          attempt: execution.attempt,
          lease: 'store',
        });
      }
      return;
  }
}

/** The reason and code a dead letter carries for a thrown error. */
function causeOf(thrown: unknown, fallbackCode: ErrorCode): RejectCause {
  const error = toError(thrown);
  return { reason: error.message, code: isIdemqError(error) ? error.code : fallbackCode };
}
