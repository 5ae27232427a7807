import type { OutgoingHttpHeader, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { NodeAnswer, NodeHeaders } from '../node/nodeAnswer.js';
import { currentMethods, type RealResponseMethods } from '../node/responseMethods.js';
import { isNullBodyStatus } from '../nullBodyStatus.js';
import { ChunkQueue } from './chunkQueue.js';

export interface ResponseCapture {
  /**
   * The route's answer, resolved once its status and headers are final (its first write or its
   * end): with the whole body when the route ended in one call, else its chunks as they come.
   */
  answer: Promise<NodeAnswer>;
  real: RealResponseMethods;
}

type WriteCallback = (error?: Error | null) => void;

// Enough for ordinary responses; a route that writes more waits for the reader (pipe-style).
const BODY_HIGH_WATER_MARK = 64 * 1024;

/**
 * Redirects what the route writes to `res` into an answer instead of the socket. Headers the
 * route sets stay on `res` (unsent) and are read when the answer is committed.
 */
export function captureResponse(res: ServerResponse): ResponseCapture {
  const real = currentMethods(res);
  let queue: ChunkQueue | undefined;
  let committed = false;
  let ended = false;
  let resolveAnswer!: (answer: NodeAnswer) => void;
  let rejectAnswer!: (error: unknown) => void;
  const answer = new Promise<NodeAnswer>((resolve, reject) => {
    resolveAnswer = resolve;
    rejectAnswer = reject;
  });

  const commit = (body: NodeAnswer['body']): void => {
    committed = true;
    try {
      resolveAnswer({ status: res.statusCode, headers: definedHeaders(res.getHeaders()), body });
    } catch (error) {
      rejectAnswer(error);
    }
  };

  /** The queue a streamed body goes through, committing the answer on first use. */
  const streaming = (): ChunkQueue => {
    if (queue === undefined) {
      queue = new ChunkQueue(BODY_HIGH_WATER_MARK, () => res.emit('drain'));
      if (!committed) commit(queue);
    }
    return queue;
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
    const bytes = chunkBytes(chunk, typeof encoding === 'function' ? undefined : encoding);
    const target = streaming();
    if (!ended && !isNullBodyStatus(res.statusCode)) target.push(bytes);
    if (typeof done === 'function') process.nextTick(done as WriteCallback);
    return ended || target.hasRoom();
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
    if (!ended) {
      ended = true;
      const bytes = data === undefined || data === null ? undefined : chunkBytes(data, enc);
      if (!committed) {
        // The common case: the whole body in one call, stored and sent without a queue.
        commit(bytes ?? null);
      } else if (queue !== undefined) {
        if (bytes !== undefined && !isNullBodyStatus(res.statusCode)) queue.push(bytes);
        queue.close();
      }
    }
    if (typeof done === 'function') process.nextTick(done as WriteCallback);
    return res;
  } as ServerResponse['end'];

  res.flushHeaders = () => {
    if (!committed) streaming();
  };

  return { answer, real };
}

function definedHeaders(headers: OutgoingHttpHeaders): NodeHeaders {
  const defined: Record<string, string | number | string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined) defined[name] = value;
  }
  return defined;
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
