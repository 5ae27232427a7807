import type { Request as ExpressRequest } from 'express';
import { requestHeaders } from '../bindingHeaders.js';

/** A WHATWG Request built from an Express request, and the raw body bytes if they were read. */
export interface WebRequestOfExpress {
  request: Request;
  /** The raw body, once the centre has read it from the unparsed stream; else `undefined`. */
  rawBody(): Buffer | undefined;
}

const BODYLESS_METHODS = new Set(['GET', 'HEAD']);
// The WHATWG Request constructor refuses these methods; they are never idempotent writes anyway.
const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);

/**
 * Builds the Request the centre sees, or `undefined` for a method a WHATWG Request cannot carry.
 *
 * Body: when a body parser already consumed the stream, the bytes of what it produced (a Buffer
 * as it is, a string as UTF-8, anything else as its JSON text); otherwise the unread stream,
 * read only if the centre reads the body, so a request the centre passes through is untouched.
 */
export function toWebRequest(req: ExpressRequest): WebRequestOfExpress | undefined {
  if (FORBIDDEN_METHODS.has(req.method)) return undefined;
  let raw: Buffer | undefined;
  let body: Uint8Array | ReadableStream<Uint8Array> | null = null;
  if (!BODYLESS_METHODS.has(req.method)) {
    body = streamConsumed(req)
      ? parsedBodyBytes(req.body)
      : lazyBody(req, (bytes) => {
          raw = bytes;
        });
  }
  const init: RequestInit & { duplex?: 'half' } = {
    method: req.method,
    headers: requestHeaders(req.rawHeaders),
    body,
  };
  if (body instanceof ReadableStream) init.duplex = 'half';
  return { request: new Request(requestUrl(req), init), rawBody: () => raw };
}

function requestUrl(req: ExpressRequest): string {
  const host = req.headers.host ?? 'localhost';
  try {
    return new URL(req.originalUrl, `${req.protocol}://${host}`).href;
  } catch {
    // A Host header that is not a valid authority: the path still identifies the resource.
    return new URL(req.originalUrl, 'http://localhost').href;
  }
}

/** True when something (a body parser) already read the request stream. */
function streamConsumed(req: ExpressRequest): boolean {
  return req.readableEnded || (req as { _body?: unknown })._body === true;
}

function parsedBodyBytes(body: unknown): Uint8Array {
  if (body === undefined || body === null) return new Uint8Array(0);
  if (body instanceof Uint8Array) return body;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  return Buffer.from(JSON.stringify(body) ?? '', 'utf8');
}

function lazyBody(
  req: ExpressRequest,
  onRead: (bytes: Buffer) => void,
): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const chunks: Buffer[] = [];
        for await (const chunk of req) {
          chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
        }
        const bytes = Buffer.concat(chunks);
        onRead(bytes);
        if (bytes.length > 0) controller.enqueue(new Uint8Array(bytes));
        controller.close();
      },
    },
    // No read-ahead: the stream is touched only when the centre reads the body.
    { highWaterMark: 0 },
  );
}
