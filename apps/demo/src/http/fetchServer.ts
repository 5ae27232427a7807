/** node:http in front of a fetch-style handler: the server the demo's payments API runs on. */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A fetch-style handler listening on 127.0.0.1. */
export interface FetchServer {
  /** `http://127.0.0.1:<port>`, the port chosen by the OS. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serves `handler` on 127.0.0.1 (a port the OS picks). The request body is read whole; the
 * response is written once the handler answered. A client that went away does not stop the
 * handler: the route still finishes and its outcome is still recorded.
 */
export async function serveFetch(
  handler: (request: Request) => Promise<Response>,
): Promise<FetchServer> {
  let baseUrl = '';
  const server = createServer((req, res) => {
    void (async () => {
      try {
        const response = await handler(await toRequest(req, baseUrl));
        const body = Buffer.from(await response.arrayBuffer());
        res.writeHead(response.status, Object.fromEntries(response.headers));
        res.end(body);
      } catch (error) {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(error instanceof Error ? error.message : String(error));
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  baseUrl = `http://127.0.0.1:${port}`;
  return {
    url: baseUrl,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

async function toRequest(req: IncomingMessage, baseUrl: string): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    headers.append(req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string);
  }
  const method = req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD' && chunks.length > 0;
  return new Request(new URL(req.url ?? '/', baseUrl), {
    method,
    headers,
    body: hasBody ? Buffer.concat(chunks) : null,
  });
}
