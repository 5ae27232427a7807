/**
 * The consumer's "give this message back" switch for one running handler: a plain object with
 * one listener slot, where an `AbortController` plus an event listener per message cost an
 * EventTarget, a listener record and their removal on every delivery, to serve the rare drain
 * that times out.
 */
export class Abandonment {
  aborted = false;
  reason: unknown;
  private listener: AbandonListener | undefined;

  /** Abandons the run: the listener (if any) runs once, now. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listener = this.listener;
    this.listener = undefined;
    listener?.abandoned(reason);
  }

  /** Sets the one listener; it runs at once when already abandoned. Undefined clears it. */
  onAbort(listener: AbandonListener | undefined): void {
    if (this.aborted) {
      listener?.abandoned(this.reason);
      return;
    }
    this.listener = listener;
  }
}

/** Told when the run it listens to is abandoned. */
export interface AbandonListener {
  abandoned(reason: unknown): void;
}
