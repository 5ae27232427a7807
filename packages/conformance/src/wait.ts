/** Resolves after `ms`. Only for cases where time itself is under test (leases, TTLs, delays). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A promise with its resolve function outside: a gate a blocked handler waits on. */
export interface Gate {
  readonly promise: Promise<void>;
  readonly opened: boolean;
  open(): void;
}

/** Creates a closed gate. */
export function gate(): Gate {
  let resolve: () => void = () => {};
  let opened = false;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return {
    promise,
    get opened() {
      return opened;
    },
    open() {
      opened = true;
      resolve();
    },
  };
}

/**
 * Polls `check` until it returns true or `timeoutMs` passes. For state that has no event to
 * wait on (a store record, a queue depth); events go through `HandlerSpy.waitFor`.
 */
export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  options: { timeoutMs: number; everyMs?: number; what: string },
): Promise<void> {
  const deadline = performance.now() + options.timeoutMs;
  for (;;) {
    if (await check()) return;
    if (performance.now() >= deadline) {
      throw new Error(`Timed out after ${options.timeoutMs} ms waiting for ${options.what}`);
    }
    await sleep(options.everyMs ?? 10);
  }
}

/** Runs `operation` and returns how long it took to settle, with its outcome. */
export async function timed<T>(
  operation: () => Promise<T>,
): Promise<{ elapsedMs: number; outcome: PromiseSettledResult<T> }> {
  const startedAt = performance.now();
  const [outcome] = await Promise.allSettled([operation()]);
  return { elapsedMs: performance.now() - startedAt, outcome: outcome as PromiseSettledResult<T> };
}
