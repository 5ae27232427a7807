import { StoreUnavailableError } from '../errors/store.js';
import { EarliestTimer } from '../timing/earliestTimer.js';

export interface OperationBatcherOptions<Request, Answer> {
  /**
   * Sends one batch, resolving one answer per request in order; a rejection fails the batch's
   * requests (each gets the error).
   */
  send(requests: Request[]): Promise<Answer[]>;
  /** Most requests in one batch. */
  maxBatch: number;
  /**
   * Batches on the wire at once: with two, the server runs one while this process answers the
   * previous one and gathers the next.
   */
  inFlight: number;
  /** Each request is answered or rejected (retriable, `timeout`) by then, however long it queued. */
  timeoutMs: number;
  /** Names the operation in timeout errors. */
  what: string;
}

interface Queued<Request, Answer> {
  request: Request;
  resolve: (answer: Answer) => void;
  reject: (error: Error) => void;
  deadline: number;
  settled: boolean;
}

/**
 * Coalesces single operations into batches, Nagle-style: with room on the wire, what one tick
 * issued leaves at the end of that tick, so an idle store adds no latency; while `inFlight`
 * batches are out, operations queue and leave together in the next. For a store whose batch
 * form costs about what one operation costs, throughput then grows with concurrency.
 */
export class OperationBatcher<Request, Answer> {
  private readonly queue: Queued<Request, Answer>[] = [];
  /** Batches on the wire, so their requests are failed by their deadlines too. */
  private readonly onTheWire = new Set<Queued<Request, Answer>[]>();
  private sending = 0;
  private scheduled = false;
  private readonly deadlines = new EarliestTimer((now) => this.expire(now));

  constructor(private readonly options: OperationBatcherOptions<Request, Answer>) {}

  run(request: Request): Promise<Answer> {
    return new Promise<Answer>((resolve, reject) => {
      const deadline = performance.now() + this.options.timeoutMs;
      this.queue.push({ request, resolve, reject, deadline, settled: false });
      this.deadlines.request(deadline);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.sending >= this.options.inFlight || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.sending < this.options.inFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.options.maxBatch).filter((item) => !item.settled);
      if (batch.length === 0) continue;
      this.sending += 1;
      this.onTheWire.add(batch);
      this.options
        .send(batch.map((item) => item.request))
        .then(
          (answers) => {
            batch.forEach((item, index) => {
              settle(item, answers[index] as Answer);
            });
          },
          (error: Error) => {
            for (const item of batch) fail(item, error);
          },
        )
        .finally(() => {
          this.sending -= 1;
          this.onTheWire.delete(batch);
          this.schedule();
        });
    }
  }

  /** Fails what waited past its deadline; returns the next deadline still waiting. */
  private expire(now: number): number | undefined {
    let next: number | undefined;
    for (const item of [...this.queue, ...[...this.onTheWire].flat()]) {
      if (item.settled) continue;
      if (item.deadline <= now) {
        fail(
          item,
          new StoreUnavailableError(
            `${this.options.what} did not answer within ${this.options.timeoutMs} ms`,
            { reason: 'timeout' },
          ),
        );
      } else if (next === undefined || item.deadline < next) next = item.deadline;
    }
    return next;
  }
}

function settle<Request, Answer>(item: Queued<Request, Answer>, answer: Answer): void {
  if (item.settled) return;
  item.settled = true;
  item.resolve(answer);
}

function fail<Request, Answer>(item: Queued<Request, Answer>, error: Error): void {
  if (item.settled) return;
  item.settled = true;
  item.reject(error);
}
