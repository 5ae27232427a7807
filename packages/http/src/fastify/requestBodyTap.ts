import { Transform } from 'node:stream';
import type { FastifyRequest, RequestPayload } from 'fastify';

/** The request body bytes as they were parsed, kept beside Fastify's own parsing. */
export interface BodyTap {
  bytes(): Buffer;
}

/**
 * Returns a stream for Fastify's `preParsing` hook that passes the payload on unchanged and keeps
 * a copy of its bytes, so the centre fingerprints exactly what the client sent whatever parser
 * runs. The copy is bounded by Fastify's `bodyLimit`, which the parser enforces on this stream.
 */
export function tapRequestBody(payload: RequestPayload): { stream: RequestPayload; tap: BodyTap } {
  const chunks: Buffer[] = [];
  let counted = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk);
      counted += chunk.length;
      callback(null, chunk);
    },
  });
  // Fastify compares this with Content-Length; an earlier hook (e.g. a decompressor) may know better.
  Object.defineProperty(stream, 'receivedEncodedLength', {
    get: () => payload.receivedEncodedLength ?? counted,
  });
  // pipe, not pipeline: pipeline aborts a controller of its own at the end of every body,
  // building an AbortError (and its stack) per request.
  payload.once('error', (error) => stream.destroy(error));
  payload.pipe(stream);
  return { stream, tap: { bytes: () => Buffer.concat(chunks) } };
}

/** Bodyless methods, as Fastify treats them: their payload is never parsed. */
export function hasParsedBody(request: FastifyRequest): boolean {
  return request.method !== 'GET' && request.method !== 'HEAD';
}
