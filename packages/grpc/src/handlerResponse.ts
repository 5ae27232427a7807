import { type Metadata, type ServerInterceptingCallInterface, status } from '@grpc/grpc-js';

/** A status as a server call sends it. */
export type SentStatus = Parameters<ServerInterceptingCallInterface['sendStatus']>[0];

/** What the handler answered: its metadata and message (when it sent them) and its status. */
export interface HandlerAnswer {
  metadata: Metadata | undefined;
  message: unknown;
  hasMessage: boolean;
  status: SentStatus;
}

/** Thrown when the client went away before grpc-js handed the call to its handler. */
export class HandlerNeverStarted extends Error {
  constructor(path: string) {
    super(`the call to ${path} was cancelled before its handler started`);
    this.name = 'HandlerNeverStarted';
  }
}

/**
 * Watches the handler's side of one guarded call. Metadata and message go out as the handler
 * sends them; the status is held until the record is written (`release`), so the client never
 * sees the call end before its outcome is stored. A client deadline or cancel ends grpc-js's
 * call, not the handler: once it started, its answer is still awaited and recorded.
 */
export class HandlerResponse {
  private metadata: Metadata | undefined;
  private message: unknown;
  private hasMessage = false;
  private heldStatus: ((status: SentStatus) => void) | undefined;
  private started = false;
  private passing = false;
  private cancelled = false;
  private settle: { resolve(answer: HandlerAnswer): void; reject(error: Error): void } | undefined;
  private outcome: { answer: HandlerAnswer } | { neverStarted: true } | undefined;

  constructor(private readonly path: string) {}

  /** The handler's answer once it sent its status (or its message, after a cancel). */
  answer(): Promise<HandlerAnswer> {
    if (this.outcome) {
      return 'answer' in this.outcome
        ? Promise.resolve(this.outcome.answer)
        : Promise.reject(new HandlerNeverStarted(this.path));
    }
    return new Promise((resolve, reject) => {
      this.settle = { resolve, reject };
    });
  }

  /** The half-close reached the handler: grpc-js calls it now. */
  handlerStarted(): void {
    if (!this.cancelled) this.started = true;
  }

  onMetadata(metadata: Metadata, next: (metadata: Metadata) => void): void {
    this.metadata = metadata;
    next(metadata);
  }

  onMessage(message: unknown, next: (message: unknown) => void): void {
    this.message = message;
    this.hasMessage = true;
    next(message);
    // After a cancel grpc-js never confirms the write, so the OK status would never come.
    if (this.cancelled) this.finish(this.okAfterCancel());
  }

  onStatus(sent: SentStatus, next: (status: SentStatus) => void): void {
    if (this.passing) {
      next(sent);
      return;
    }
    this.heldStatus = next;
    this.finish(sent);
  }

  onCancel(): void {
    this.cancelled = true;
    if (!this.started) this.neverStarts();
    else if (this.hasMessage) this.finish(this.okAfterCancel());
  }

  /** The call runs unguarded: nothing is held or awaited. */
  passThrough(): void {
    this.passing = true;
  }

  /** Lets the handler's status through, once its outcome is recorded. */
  release(): void {
    const next = this.heldStatus;
    this.heldStatus = undefined;
    if (next && this.outcome && 'answer' in this.outcome) next(this.outcome.answer.status);
  }

  private okAfterCancel(): SentStatus {
    return { code: status.OK, details: 'OK', metadata: null };
  }

  private finish(sent: SentStatus): void {
    if (this.outcome) return;
    const answer = {
      metadata: this.metadata,
      message: this.message,
      hasMessage: this.hasMessage,
      status: sent,
    };
    this.outcome = { answer };
    this.settle?.resolve(answer);
  }

  /** The handler will never answer; the error is made only for a run that awaits it. */
  private neverStarts(): void {
    if (this.outcome) return;
    this.outcome = { neverStarted: true };
    this.settle?.reject(new HandlerNeverStarted(this.path));
  }
}
