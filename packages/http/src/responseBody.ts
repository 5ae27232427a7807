import { concatBytes } from './concatBytes.js';

/** A response body read up to a limit. */
export type BodyRead =
  | { kind: 'complete'; bytes: Uint8Array }
  /** Over the limit: `rest` yields the whole body, the part already read first. */
  | { kind: 'too-large'; rest: AsyncIterable<Uint8Array> };

/** A body as routes produce it: a WHATWG stream, a node Readable, any async iterable. */
export type BodyChunks = AsyncIterable<Uint8Array | string>;

const encoder = new TextEncoder();

/**
 * Reads a body until it ends or passes `maxBytes`. Past the limit nothing more is read ahead:
 * the rest flows to the client as it reads, so a large or endless body is never buffered.
 */
export async function readBodyUpTo(body: BodyChunks | null, maxBytes: number): Promise<BodyRead> {
  if (body === null) return { kind: 'complete', bytes: new Uint8Array(0) };
  // The iterator by hand: leaving a for-await early would cancel the body.
  const iterator = body[Symbol.asyncIterator]();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await iterator.next();
    if (done) return { kind: 'complete', bytes: concatBytes(chunks, total) };
    const chunk = asBytes(value);
    chunks.push(chunk);
    total += chunk.byteLength;
    if (total > maxBytes) return { kind: 'too-large', rest: continued(chunks, iterator) };
  }
}

async function* continued(
  head: Uint8Array[],
  iterator: AsyncIterator<Uint8Array | string>,
): AsyncGenerator<Uint8Array> {
  try {
    yield* head;
    for (;;) {
      const { done, value } = await iterator.next();
      if (done) return;
      yield asBytes(value);
    }
  } finally {
    // The client went away (the generator was closed early): stop the route's body too.
    await iterator.return?.();
  }
}

/** Handlers may stream strings; a response body is bytes. */
function asBytes(chunk: unknown): Uint8Array {
  if (chunk instanceof Uint8Array) return chunk;
  if (typeof chunk === 'string') return encoder.encode(chunk);
  throw new TypeError('a response body chunk must be a Uint8Array or a string');
}
