import { concatBytes } from './concatBytes.js';

/** A response body read up to a limit. */
export type BodyRead =
  | { kind: 'complete'; bytes: Uint8Array }
  /** Over the limit: `stream` yields the whole body, the part already read first. */
  | { kind: 'too-large'; stream: ReadableStream<Uint8Array> };

const encoder = new TextEncoder();

/**
 * Reads a body until it ends or passes `maxBytes`. Past the limit nothing more is read ahead:
 * the rest flows to the client as it reads, so a large or endless body is never buffered.
 */
export async function readBodyUpTo(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
): Promise<BodyRead> {
  if (body === null) return { kind: 'complete', bytes: new Uint8Array(0) };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { kind: 'complete', bytes: concatBytes(chunks, total) };
    const chunk = asBytes(value);
    chunks.push(chunk);
    total += chunk.byteLength;
    if (total > maxBytes) return { kind: 'too-large', stream: continued(chunks, reader) };
  }
}

function continued(
  head: Uint8Array[],
  reader: ReadableStreamDefaultReader<Uint8Array>,
): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of head) controller.enqueue(chunk);
    },
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(asBytes(value));
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/** Handlers may stream strings; a response body is bytes. */
function asBytes(chunk: unknown): Uint8Array {
  if (chunk instanceof Uint8Array) return chunk;
  if (typeof chunk === 'string') return encoder.encode(chunk);
  throw new TypeError('a response body chunk must be a Uint8Array or a string');
}
