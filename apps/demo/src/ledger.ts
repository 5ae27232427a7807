/**
 * The side-effect ledger: what actually happened to each payment, recorded outside the consumers
 * so the demo checks idemq instead of trusting its own bookkeeping.
 *
 * - an *effect* is a handler call that returned successfully: the payment was charged (with
 *   `--store postgres`, a row of the ledger table, read from the database after the run, since a
 *   handler that returned has charged nothing until its transaction commits);
 * - a *completion* is a `processed` event: the record went COMPLETED;
 * - a *dead letter* is a copy that arrived on the dead-letter queue.
 *
 * "Processed twice" counts ids charged (or completed) more than once; "lost" counts published ids
 * that were neither completed nor dead-lettered.
 */

interface Entry {
  /** Copies published. */
  copies: number;
  handlerRuns: number;
  effects: number;
  completions: number;
  duplicatesSkipped: number;
  deadLetters: number;
}

/** Totals and the ids that break an invariant. */
export interface LedgerReport {
  /** Distinct ids published. */
  uniqueIds: number;
  /** Copies published, originals and duplicates. */
  sent: number;
  handlerRuns: number;
  /** Distinct ids completed at least once. */
  completed: number;
  /** Copies acked as duplicates without running the handler. */
  duplicatesSkipped: number;
  /** Distinct ids found on the dead-letter queue. */
  deadLettered: number;
  /** Copies found on the dead-letter queue. */
  deadLetterMessages: number;
  /** Ids whose handler succeeded, or that completed, more than once. */
  processedTwice: string[];
  /** Ids published that were neither completed nor dead-lettered. */
  lost: string[];
  /** Ids both completed and dead-lettered (a completed payment must never reach the DLQ). */
  completedAndDeadLettered: string[];
}

/** Counts, per requestId, every copy, handler run, effect, completion and dead letter. */
export class Ledger {
  private readonly entries = new Map<string, Entry>();
  private publishedIds = 0;
  private settledIds = 0;
  private skipped = 0;

  /** A copy of `requestId` was handed to the broker. */
  published(requestId: string): void {
    const entry = this.entry(requestId);
    if (entry.copies === 0) this.publishedIds++;
    entry.copies++;
  }

  /** The handler started for `requestId`. */
  handlerStarted(requestId: string): void {
    this.entry(requestId).handlerRuns++;
  }

  /** The handler returned successfully: the payment's side effect was applied. */
  effectApplied(requestId: string): void {
    this.entry(requestId).effects++;
  }

  /** A consumer reported `processed`: the record is COMPLETED. */
  completed(requestId: string): void {
    const entry = this.entry(requestId);
    if (entry.completions === 0 && entry.deadLetters === 0) this.settledIds++;
    entry.completions++;
  }

  /** A consumer acked a copy as a duplicate. */
  duplicateSkipped(requestId: string): void {
    this.entry(requestId).duplicatesSkipped++;
    this.skipped++;
  }

  /** A copy arrived on the dead-letter queue. */
  deadLettered(requestId: string): void {
    const entry = this.entry(requestId);
    if (entry.completions === 0 && entry.deadLetters === 0) this.settledIds++;
    entry.deadLetters++;
  }

  /** Whether `requestId` is settled: completed or dead-lettered. */
  isSettled(requestId: string): boolean {
    const entry = this.entries.get(requestId);
    return entry !== undefined && (entry.completions > 0 || entry.deadLetters > 0);
  }

  /** Whether a consumer reported `requestId` processed. */
  isCompleted(requestId: string): boolean {
    return (this.entries.get(requestId)?.completions ?? 0) > 0;
  }

  /** Whether a copy of `requestId` arrived on the dead-letter queue. */
  isDeadLettered(requestId: string): boolean {
    return (this.entries.get(requestId)?.deadLetters ?? 0) > 0;
  }

  /** Copies skipped as duplicates so far. */
  get duplicatesSkippedTotal(): number {
    return this.skipped;
  }

  /** Distinct ids published so far. */
  get uniqueIds(): number {
    return this.publishedIds;
  }

  /** Distinct ids completed or dead-lettered so far (O(1): polled by the progress bar). */
  get settled(): number {
    return this.settledIds;
  }

  /** Totals now, with the ids that violate an invariant. */
  report(): LedgerReport {
    const report: LedgerReport = {
      uniqueIds: this.publishedIds,
      sent: 0,
      handlerRuns: 0,
      completed: 0,
      duplicatesSkipped: 0,
      deadLettered: 0,
      deadLetterMessages: 0,
      processedTwice: [],
      lost: [],
      completedAndDeadLettered: [],
    };
    for (const [requestId, entry] of this.entries) {
      report.sent += entry.copies;
      report.handlerRuns += entry.handlerRuns;
      report.duplicatesSkipped += entry.duplicatesSkipped;
      report.deadLetterMessages += entry.deadLetters;
      if (entry.completions > 0) report.completed++;
      if (entry.deadLetters > 0) report.deadLettered++;
      if (entry.effects > 1 || entry.completions > 1) report.processedTwice.push(requestId);
      // Only published ids can be lost; events for an id never published are ignored here.
      if (entry.copies > 0 && entry.completions === 0 && entry.deadLetters === 0) {
        report.lost.push(requestId);
      }
      if (entry.completions > 0 && entry.deadLetters > 0) {
        report.completedAndDeadLettered.push(requestId);
      }
    }
    return report;
  }

  private entry(requestId: string): Entry {
    let entry = this.entries.get(requestId);
    if (!entry) {
      entry = {
        copies: 0,
        handlerRuns: 0,
        effects: 0,
        completions: 0,
        duplicatesSkipped: 0,
        deadLetters: 0,
      };
      this.entries.set(requestId, entry);
    }
    return entry;
  }
}
