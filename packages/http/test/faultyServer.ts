import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toRequest, writeResponse } from './fetchServer.js';

/** What the server does to one arrival. */
export type Fault =
  /** Handed to the handler and answered. */
  | 'none'
  /** A 503 before the handler sees it. */
  | 'unavailable'
  /** The connection dropped before the handler sees it. */
  | 'dropBefore'
  /** The handler runs and answers, its response read whole, then the connection drops. */
  | 'dropAfter'
  /** The connection drops as soon as the handler has the request: it goes on without a client. */
  | 'dropWhileRunning';

export interface FaultyArrival {
  fault: Fault;
  key: string | null;
  /** The handler's status, when the handler saw the arrival. */
  status?: number;
  /** Whether the handler's response carried `Idempotent-Replayed: true`. */
  replayed?: boolean;
}

export interface FaultyServer {
  url: string;
  arrivals: FaultyArrival[];
  /** Resolves once every handler call started so far has settled. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Serves a fetch-style handler over node:http on 127.0.0.1 with a fault injector in front of it:
 * `chooseFault` picks, per arrival, whether the handler sees it and whether its answer arrives.
 */
export async function serveWithFaults(
  handler: (request: Request) => Promise<Response>,
  chooseFault: (request: Request) => Promise<Fault>,
): Promise<FaultyServer> {
  const arrivals: FaultyArrival[] = [];
  const running = new Set<Promise<void>>();
  const server = createServer((req, res) => {
    const handled = (async () => {
      try {
        const request = await toRequest(req, baseUrl);
        const fault = await chooseFault(request.clone());
        const arrival: FaultyArrival = { fault, key: request.headers.get('idempotency-key') };
        arrivals.push(arrival);
        if (fault === 'dropBefore') return void req.socket.destroy();
        if (fault === 'unavailable') {
          res.writeHead(503, { 'retry-after': '1', 'content-type': 'text/plain' });
          return void res.end('injected 503');
        }
        const responding = handler(request);
        if (fault === 'dropWhileRunning') req.socket.destroy();
        const response = await responding;
        arrival.status = response.status;
        arrival.replayed = response.headers.get('idempotent-replayed') === 'true';
        if (fault === 'dropAfter' || fault === 'dropWhileRunning') {
          await response.arrayBuffer();
          return void req.socket.destroy();
        }
        await writeResponse(res, response);
      } catch (error) {
        if (!res.headersSent) res.writeHead(500);
        res.end(String(error));
      }
    })();
    running.add(handled);
    void handled.finally(() => running.delete(handled));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    url: baseUrl,
    arrivals,
    settled: async () => {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
