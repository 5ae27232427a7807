import { BatchResultsInvalidError, toError } from '../errors/handler.js';
import type {
  BatchContext,
  BatchHandler,
  BatchItem,
  ConsumedMessage,
  HandlerContext,
} from './types.js';

interface Joined<T, R> {
  item: BatchItem<T>;
  resolve: (result: R) => void;
  reject: (error: Error) => void;
}

/**
 * One batch handler call, made of the deliveries that entered it. Each delivery runs the
 * engine's own per-message steps (claim, lease, record, settle); where a handler would run, it
 * joins the call instead, and one that is not run (bad input, duplicate, in progress…) leaves.
 * Once no more may enter (`seal`) and every member joined or left, the handler runs once with
 * the joined items, and each member's wait ends with its own item's result.
 */
export class BatchCall<T, R> {
  private entered = 0;
  private left = 0;
  private sealed = false;
  private readonly joined: Joined<T, R>[] = [];

  constructor(private readonly handler: BatchHandler<T, R>) {}

  enter(): BatchMember<T, R> {
    this.entered += 1;
    return new BatchMember(this);
  }

  /** No more members: the call runs as soon as every member has joined or left. */
  seal(): void {
    this.sealed = true;
    this.runWhenReady();
  }

  join(item: BatchItem<T>): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.joined.push({ item, resolve, reject });
      this.runWhenReady();
    });
  }

  leave(): void {
    this.left += 1;
    this.runWhenReady();
  }

  private runWhenReady(): void {
    if (!this.sealed || this.joined.length + this.left < this.entered) return;
    if (this.joined.length === 0) return;
    void this.run();
  }

  private async run(): Promise<void> {
    const members = this.joined.splice(0);
    const items = members.map((member) => member.item);
    let results: unknown;
    try {
      results = await this.handler(items, new BatchRunContext(items));
    } catch (thrown) {
      const error = toError(thrown);
      for (const member of members) member.reject(error);
      return;
    }
    if (results === undefined) {
      for (const member of members) member.resolve(undefined as R);
      return;
    }
    if (!Array.isArray(results) || results.length !== members.length) {
      const error = new BatchResultsInvalidError(
        `expected an array of ${members.length} settled results, got ${describe(results)}`,
      );
      for (const member of members) member.reject(error);
      return;
    }
    for (let i = 0; i < members.length; i++) settleMember(members[i] as Joined<T, R>, results[i]);
  }
}

/** A delivery's place in a call: it joins once, or leaves; whichever comes first counts. */
export class BatchMember<T, R> {
  private done = false;

  constructor(private readonly call: BatchCall<T, R>) {}

  /** Waits for the call and resolves (or rejects) with this message's own result. */
  join(message: ConsumedMessage<T>, ctx: HandlerContext): Promise<R> {
    this.done = true;
    return this.call.join({ message, ctx });
  }

  /** Not run in this call; a no-op once joined or left. */
  leave(): void {
    if (this.done) return;
    this.done = true;
    this.call.leave();
  }
}

/**
 * Opens a call for the deliveries that start processing in one turn of the event loop (a
 * transport hands a fetched batch out in one go) and seals it at the end of that turn.
 */
export class BatchOpener<T, R> {
  private open: BatchCall<T, R> | undefined;

  constructor(private readonly handler: BatchHandler<T, R>) {}

  enter(): BatchMember<T, R> {
    if (!this.open) {
      const call = new BatchCall(this.handler);
      this.open = call;
      setImmediate(() => {
        this.open = undefined;
        call.seal();
      });
    }
    return this.open.enter();
  }
}

function settleMember<T, R>(member: Joined<T, R>, result: unknown): void {
  const settled = result as { status?: unknown; value?: unknown; reason?: unknown } | undefined;
  if (settled?.status === 'fulfilled') member.resolve(settled.value as R);
  else if (settled?.status === 'rejected') member.reject(toError(settled.reason));
  else member.reject(new BatchResultsInvalidError(`an item's result is ${describe(result)}`));
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return `an array of ${value.length}`;
  return value === null ? 'null' : typeof value;
}

/** The batch's context: one signal for the whole call, made only when the handler reads it. */
class BatchRunContext<T> implements BatchContext {
  private anySignal: AbortSignal | undefined;

  constructor(private readonly items: readonly BatchItem<T>[]) {}

  get signal(): AbortSignal {
    this.anySignal ??= AbortSignal.any(this.items.map((item) => item.ctx.signal));
    return this.anySignal;
  }

  leaseRemainingMs(): number {
    let least = Number.POSITIVE_INFINITY;
    for (const { ctx } of this.items) least = Math.min(least, ctx.leaseRemainingMs());
    return least;
  }
}
