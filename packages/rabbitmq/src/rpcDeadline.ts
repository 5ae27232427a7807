import { TransportUnavailableError } from './errors.js';

/**
 * `call` (a channel RPC: open, declare, check, prefetch, consume, cancel), or a retriable
 * `TransportUnavailableError` once it has gone `timeoutMs` without an answer. amqplib waits for
 * ever: a queue whose process is stuck (a classic queue's process blocked, a quorum queue without
 * a leader) never answers a declare or a consume, and `start()`, a re-subscription or a retry's
 * tier declaration would hang with it. `abandon` runs first: an RPC channel answers in order, so
 * the channel is useless until that answer, and its caller must drop it without waiting on it.
 */
export function answerWithin<T>(
  call: Promise<T>,
  timeoutMs: number,
  what: string,
  abandon: () => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      abandon();
      reject(
        new TransportUnavailableError(
          `RabbitMQ did not answer ${what} within ${timeoutMs} ms (rpcTimeoutMs); its channel ` +
            `was abandoned. A queue that does not answer is stuck on the broker's side (a queue ` +
            `process blocked, a quorum queue without a leader).`,
        ),
      );
    }, timeoutMs);
    call.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** A channel being opened, or `answerWithin`'s error; a channel that opens too late is closed. */
export function openedWithin<C extends { close(): Promise<void> }>(
  opening: Promise<C>,
  timeoutMs: number,
): Promise<C> {
  return answerWithin(opening, timeoutMs, 'a channel open', () => {
    opening.then((late) => late.close()).catch(() => undefined);
  });
}

/**
 * Runs `close` (of a channel or a connection) and waits at most `timeoutMs` for it: a channel
 * whose queue does not answer never confirms its close, nor does its connection. Never rejects
 * (a close that fails has nothing left to close); resolves `false` when the time ran out.
 */
export function closedWithin(close: () => Promise<void>, timeoutMs: number): Promise<boolean> {
  let closing: Promise<void>;
  try {
    closing = close();
  } catch {
    return Promise.resolve(true);
  }
  return answerWithin(closing, timeoutMs, 'a close', () => undefined).then(
    () => true,
    (error: unknown) => !(error instanceof TransportUnavailableError),
  );
}
