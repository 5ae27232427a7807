import {
  type InterceptingListener,
  type InterceptorOptions,
  Metadata,
  type NextCall,
  type StatusObject,
} from '@grpc/grpc-js';
import { advisedDelayMs } from './advisedDelay.js';
import { withIdempotencyKey } from './callKey.js';
import { deadlineEpochMs, retryDelayMs } from './delay.js';
import type { ClientSettings } from './options.js';

/** What grpc-js calls below an interceptor: the next interceptor or the call itself. */
type Attempt = ReturnType<NextCall>;
type MessageContext = Parameters<Attempt['sendMessageWithContext']>[0];

/** What one attempt received, held back until it is known to be the last. */
interface AttemptAnswer {
  headers: Metadata | undefined;
  messages: unknown[];
}

/**
 * One logical unary call sent as up to `maxAttempts` calls from `nextCall`, all with the same
 * metadata (key included) and message. Start and sendMessage save what they send; an attempt's
 * status either reaches the caller, with that attempt's headers and message, or starts the next
 * attempt after a wait. The caller sees only the last attempt.
 *
 * It stands between grpc-js's `InterceptingCall` and the attempts, rather than in a requester,
 * because a cancel must reach whichever attempt is current (or end a wait), with its own code.
 */
export class RetryingUnaryCall implements Attempt {
  private current: Attempt;
  private attempts = 1;
  private listener: Partial<InterceptingListener> = {};
  private metadata = new Metadata();
  private request: { message: unknown; flags: number | undefined } | undefined;
  private halfClosed = false;
  private reading = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private cancelled = false;
  private ended = false;
  private readonly deadlineMs: number;

  constructor(
    private readonly options: InterceptorOptions,
    private readonly nextCall: NextCall,
    private readonly settings: ClientSettings,
  ) {
    this.current = nextCall(options);
    this.deadlineMs = deadlineEpochMs(options.deadline);
  }

  start(metadata: Metadata, listener: Partial<InterceptingListener> = {}): void {
    this.listener = listener;
    this.metadata = withIdempotencyKey(metadata, this.settings.metadataKey, this.settings.newKey);
    this.startAttempt(this.current);
  }

  sendMessageWithContext(context: MessageContext, message: unknown): void {
    this.request = { message, flags: context.flags };
    // During a wait the next attempt sends it, from `request`.
    if (this.retryTimer === undefined) this.current.sendMessageWithContext(context, message);
  }

  sendMessage(message: unknown): void {
    this.sendMessageWithContext({}, message);
  }

  halfClose(): void {
    this.halfClosed = true;
    if (this.retryTimer === undefined) this.current.halfClose();
  }

  startRead(): void {
    this.reading = true;
    if (this.retryTimer === undefined) this.current.startRead();
  }

  cancelWithStatus(code: StatusObject['code'], details: string): void {
    this.cancelled = true;
    if (this.retryTimer !== undefined) {
      // No attempt is running to report the cancel: report it here.
      clearTimeout(this.retryTimer);
      this.retryTimer = undefined;
      this.finish(
        { headers: undefined, messages: [] },
        { code, details, metadata: new Metadata() },
      );
      return;
    }
    // The attempt's status comes back through `settle`, which no longer retries.
    this.current.cancelWithStatus(code, details);
  }

  getPeer(): string {
    return this.current.getPeer();
  }

  getAuthContext(): ReturnType<Attempt['getAuthContext']> {
    return this.current.getAuthContext();
  }

  /** Starts `call` and sends it whatever the caller has sent so far. */
  private startAttempt(call: Attempt): void {
    // A copy per attempt: layers below may add entries to the metadata they are given.
    call.start(this.metadata.clone(), this.listen(call));
    if (this.request !== undefined) {
      const context = this.request.flags === undefined ? {} : { flags: this.request.flags };
      call.sendMessageWithContext(context, this.request.message);
    }
    if (this.halfClosed) call.halfClose();
    if (this.reading) call.startRead();
  }

  private listen(call: Attempt): InterceptingListener {
    const answer: AttemptAnswer = { headers: undefined, messages: [] };
    return {
      onReceiveMetadata: (headers) => {
        answer.headers = headers;
      },
      onReceiveMessage: (message: unknown) => {
        answer.messages.push(message);
      },
      onReceiveStatus: (status) => {
        // A status from an attempt already given up on (a repeat after a cancel) is not news.
        if (call === this.current) this.settle(answer, status);
      },
    };
  }

  private settle(answer: AttemptAnswer, status: StatusObject): void {
    if (this.ended || this.retryTimer !== undefined) return;
    const retriable =
      !this.cancelled &&
      this.settings.retryOn.has(status.code) &&
      this.attempts < this.settings.maxAttempts;
    const delayMs = retriable
      ? retryDelayMs(
          {
            failedAttempt: this.attempts,
            advisedMs: advisedDelayMs(status.metadata, answer.headers),
            deadlineMs: this.deadlineMs,
            nowMs: Date.now(),
          },
          this.settings,
        )
      : undefined;
    if (delayMs === undefined) {
      this.finish(answer, status);
      return;
    }
    // Not unref'd: the caller is waiting for this call, as for grpc-js's own retry timer.
    this.retryTimer = setTimeout(() => this.retry(answer, status), delayMs);
  }

  private retry(answer: AttemptAnswer, status: StatusObject): void {
    this.retryTimer = undefined;
    try {
      const next = this.nextCall(this.options);
      this.current = next;
      this.attempts += 1;
      this.startAttempt(next);
    } catch {
      // The channel was closed during the wait: the last answer is the call's.
      this.finish(answer, status);
    }
  }

  private finish(answer: AttemptAnswer, status: StatusObject): void {
    if (this.ended) return;
    this.ended = true;
    if (answer.headers !== undefined) this.listener.onReceiveMetadata?.(answer.headers);
    for (const message of answer.messages) this.listener.onReceiveMessage?.(message);
    this.listener.onReceiveStatus?.(status);
  }
}
