import type { OutgoingHttpHeader, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { isNullBodyStatus, responseHeaders } from '../bindingHeaders.js';

/** The response methods the capture replaces, as they were before it. */
export interface RealResponseMethods {
  writeHead: (this: ServerResponse, statusCode: number, ...rest: unknown[]) => unknown;
  write: (this: ServerResponse, chunk: unknown, ...rest: unknown[]) => boolean;
  end: (this: ServerResponse, ...rest: unknown[]) => unknown;
}

/** The response methods as they are now (another middleware may have wrapped them). */
export function currentMethods(res: ServerResponse): RealResponseMethods {
  return {
    writeHead: res.writeHead as RealResponseMethods['writeHead'],
    write: res.write as RealResponseMethods['write'],
    end: res.end as RealResponseMethods['end'],
  };
}

export interface ResponseCapture {
  /**
   * The route's Response, resolved once its status and headers are final (its first write or
   * its end); the body streams on as the route writes it.
   */
  response: Promise<Response>;
  real: RealResponseMethods;
}

type WriteCallback = (error?: Error | null) => void;

// Enough for ordinary responses; a route that writes more waits for the reader (pipe-style).
const BODY_HIGH_WATER_MARK = 64 * 1024;

/**
 * Redirects what the route writes to `res` into a WHATWG Response instead of the socket. Headers
 * the route sets stay on `res` (unsent) and are read when the response is committed.
 */
export function captureResponse(res: ServerResponse): ResponseCapture {
  const real = currentMethods(res);
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let committed = false;
  let ended = false;
  let readerGone = false;
  let waitingForDrain = false;
  let resolveResponse!: (response: Response) => void;
  let rejectResponse!: (error: unknown) => void;
  const response = new Promise<Response>((resolve, reject) => {
    resolveResponse = resolve;
    rejectResponse = reject;
  });

  const body = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
      },
      pull() {
        if (waitingForDrain) {
          waitingForDrain = false;
          res.emit('drain');
        }
      },
      cancel() {
        readerGone = true;
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: BODY_HIGH_WATER_MARK }),
  );

  const commit = (): void => {
    if (committed) return;
    committed = true;
    try {
      const status = res.statusCode;
      resolveResponse(
        new Response(isNullBodyStatus(status) ? null : body, {
          status,
          statusText: res.statusMessage ?? '',
          headers: responseHeaders(res.getHeaders()),
        }),
      );
    } catch (error) {
      rejectResponse(error);
    }
  };

  const append = (chunk: unknown, encoding: unknown): void => {
    const bytes = chunkBytes(chunk, encoding);
    commit();
    if (ended || readerGone || bytes.length === 0 || isNullBodyStatus(res.statusCode)) return;
    controller.enqueue(bytes);
  };

  res.writeHead = function writeHead(
    this: ServerResponse,
    statusCode: number,
    reasonOrHeaders?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
    maybeHeaders?: OutgoingHttpHeaders | OutgoingHttpHeader[],
  ): ServerResponse {
    res.statusCode = statusCode;
    let headers = maybeHeaders;
    if (typeof reasonOrHeaders === 'string') res.statusMessage = reasonOrHeaders;
    else headers = reasonOrHeaders;
    if (headers !== undefined) applyHeaders(res, headers);
    return res;
  } as ServerResponse['writeHead'];

  res.write = function write(chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
    const done = typeof encoding === 'function' ? encoding : callback;
    append(chunk, typeof encoding === 'function' ? undefined : encoding);
    if (typeof done === 'function') process.nextTick(done as WriteCallback);
    if (readerGone || ended || (controller.desiredSize ?? 0) > 0) return true;
    waitingForDrain = true;
    return false;
  } as ServerResponse['write'];

  res.end = function end(chunk?: unknown, encoding?: unknown, callback?: unknown): ServerResponse {
    let data = chunk;
    let enc = encoding;
    let done = callback;
    if (typeof data === 'function') {
      done = data;
      data = undefined;
    } else if (typeof enc === 'function') {
      done = enc;
      enc = undefined;
    }
    if (data !== undefined && data !== null) append(data, enc);
    commit();
    if (!ended) {
      ended = true;
      if (!readerGone) controller.close();
    }
    if (typeof done === 'function') process.nextTick(done as WriteCallback);
    return res;
  } as ServerResponse['end'];

  res.flushHeaders = commit;

  return { response, real };
}

function chunkBytes(chunk: unknown, encoding: unknown): Uint8Array {
  if (typeof chunk === 'string') {
    return Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
  }
  if (chunk instanceof Uint8Array) return new Uint8Array(chunk); // the caller may reuse its buffer
  throw new TypeError('response chunks must be strings, Buffers or Uint8Arrays');
}

function applyHeaders(
  res: ServerResponse,
  headers: OutgoingHttpHeaders | OutgoingHttpHeader[],
): void {
  if (!Array.isArray(headers)) {
    for (const [name, value] of Object.entries(headers)) {
      if (value !== undefined) res.setHeader(name, value);
    }
    return;
  }
  // Either [name, value, name, value…] or [[name, value], …], as Node accepts.
  const pairs: Array<[string, OutgoingHttpHeader]> = [];
  if (headers.every((entry) => Array.isArray(entry))) {
    for (const entry of headers as unknown as Array<[string, OutgoingHttpHeader]>) {
      pairs.push([entry[0], entry[1]]);
    }
  } else {
    for (let index = 0; index + 1 < headers.length; index += 2) {
      pairs.push([String(headers[index]), headers[index + 1]!]);
    }
  }
  for (const [name, value] of pairs) {
    const existing = res.getHeader(name);
    res.setHeader(name, existing === undefined ? value : [existing, value].flat().map(String));
  }
}
