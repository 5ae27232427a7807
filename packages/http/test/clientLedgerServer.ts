import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { seededRandom } from '@idemq/core/testing';

/** How often each misbehaviour happens, per arrival of a POST /orders. */
export interface Chaos {
  /** 503 before anything runs (half of them with `Retry-After: 0`). */
  unavailable: number;
  /** 409 + `Retry-After: 0` before anything runs. */
  conflict: number;
  /** The connection dropped before the effect runs. */
  dropBefore: number;
  /** The effect runs and is recorded, then the connection drops: the answer is lost. */
  dropAfter: number;
  /** The connection drops while the effect still runs: a retry meets it in flight (409). */
  dropWhileRunning: number;
}

export interface Arrival {
  path: string;
  method: string;
  key: string | null;
  atMs: number;
  body: Uint8Array;
  contentType: string | undefined;
  headers: IncomingHttpHeaders;
}

type LedgerEntry = { state: 'running' } | { state: 'done'; status: number; body: string };

/**
 * A stand-in for an idempotent server: it dedups POST /orders by `Idempotency-Key` with an
 * in-memory ledger (key → first response; in flight → 409 + Retry-After), counts how often each
 * order's effect really ran, and misbehaves at random (seeded per order, so a run repeats).
 */
export async function startLedgerServer(options: { seed: number; chaos?: Partial<Chaos> }) {
  const chaos: Chaos = {
    unavailable: 0,
    conflict: 0,
    dropBefore: 0,
    dropAfter: 0,
    dropWhileRunning: 0,
    ...options.chaos,
  };
  const ledger = new Map<string, LedgerEntry>();
  const executions = new Map<number, number>();
  const arrivals: Arrival[] = [];
  const randoms = new Map<number, () => number>();
  const pending = new Set<NodeJS.Timeout>();
  let charges = 0;

  const randomFor = (order: number): (() => number) => {
    let random = randoms.get(order);
    if (random === undefined) {
      random = seededRandom(options.seed * 100_003 + order);
      randoms.set(order, random);
    }
    return random;
  };

  const later = (ms: number, fn: () => void): void => {
    const timer = setTimeout(() => {
      pending.delete(timer);
      fn();
    }, ms);
    pending.add(timer);
  };

  const runEffect = (order: number, key: string): LedgerEntry => {
    executions.set(order, (executions.get(order) ?? 0) + 1);
    charges += 1;
    return { state: 'done', status: 201, body: JSON.stringify({ order, charge: charges, key }) };
  };

  const orders = (request: IncomingMessage, response: ServerResponse, arrival: Arrival): void => {
    const key = arrival.key === null ? null : unquote(arrival.key);
    if (key === null) return void send(response, 400, 'key missing');
    const order = (JSON.parse(new TextDecoder().decode(arrival.body)) as { order: number }).order;
    const draw = randomFor(order)();
    let band = 0;
    const within = (p: number): boolean => {
      band += p;
      return draw < band;
    };
    if (within(chaos.unavailable)) {
      return void send(response, 503, 'unavailable', draw < band / 2 ? { 'retry-after': '0' } : {});
    }
    if (within(chaos.conflict)) return void send(response, 409, 'busy', { 'retry-after': '0' });
    if (within(chaos.dropBefore)) return void request.socket.destroy();
    const entry = ledger.get(key);
    if (entry?.state === 'running')
      return void send(response, 409, 'in flight', { 'retry-after': '1' });
    if (entry?.state === 'done') {
      return void send(response, entry.status, entry.body, { 'idempotent-replayed': 'true' });
    }
    ledger.set(key, { state: 'running' });
    if (within(chaos.dropAfter)) {
      ledger.set(key, runEffect(order, key));
      return void request.socket.destroy();
    }
    if (within(chaos.dropWhileRunning)) {
      request.socket.destroy();
      return void later(150, () => ledger.set(key, runEffect(order, key)));
    }
    const done = runEffect(order, key);
    ledger.set(key, done);
    if (done.state === 'done') send(response, done.status, done.body);
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://127.0.0.1');
      const header = request.headers['idempotency-key'];
      const arrival: Arrival = {
        path: url.pathname,
        method: request.method ?? '',
        key: typeof header === 'string' ? header : null,
        atMs: performance.now(),
        body: new Uint8Array(Buffer.concat(chunks)),
        contentType: request.headers['content-type'],
        headers: request.headers,
      };
      arrivals.push(arrival);
      const seen = arrivals.filter((a) => a.path === url.pathname).length;
      const param = (name: string): string | null => url.searchParams.get(name);
      switch (url.pathname) {
        case '/orders':
          return orders(request, response, arrival);
        case '/status': {
          // Answers `status` for the first `times` arrivals, then 201; `retryAfter` as given.
          const times = Number(param('times') ?? Number.POSITIVE_INFINITY);
          const retryAfter = param('retryAfter');
          if (seen <= times) {
            return void send(
              response,
              Number(param('code')),
              'no',
              retryAfter === null ? {} : { 'retry-after': retryAfter },
            );
          }
          return void send(response, 201, `ok after ${seen}`);
        }
        case '/hang':
          // Never answers the first `times` arrivals, then 201.
          if (seen <= Number(param('times') ?? Number.POSITIVE_INFINITY)) return;
          return void send(response, 201, 'finally');
        case '/echo':
          // Drops the first arrival after reading the body, echoes it on the next ones.
          if (seen === 1) return void request.socket.destroy();
          return void send(response, 200, Buffer.from(arrival.body));
        case '/drop':
          return void request.socket.destroy();
        default:
          return void send(response, 404, 'no route');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    arrivals,
    executions,
    /** The first response stored for a key. */
    storedBody(key: string): string | undefined {
      const entry = ledger.get(key);
      return entry?.state === 'done' ? entry.body : undefined;
    },
    /** Orders whose effect ran more than once: the checker of exactly-once. */
    ranMoreThanOnce(): number[] {
      return [...executions].filter(([, count]) => count > 1).map(([order]) => order);
    },
    async close(): Promise<void> {
      for (const timer of pending) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type LedgerServer = Awaited<ReturnType<typeof startLedgerServer>>;

function send(
  response: ServerResponse,
  status: number,
  body: string | Buffer,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, headers).end(body);
}

/** A key as an sf-string (`"…"`) or a bare token. */
function unquote(value: string): string {
  return value.startsWith('"') && value.endsWith('"')
    ? value.slice(1, -1).replace(/\\(["\\])/g, '$1')
    : value;
}
