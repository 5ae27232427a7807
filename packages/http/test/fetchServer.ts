import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A fetch-style handler served over real HTTP, for tests only. */
export interface FetchServer {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves `(request) => Promise<Response>` with node:http on 127.0.0.1 (a port the OS picks): the
 * request body is read whole, the response body streamed back as the handler's stream yields it.
 */
export async function serveFetch(
  handler: (request: Request) => Promise<Response>,
): Promise<FetchServer> {
  const server = createServer((req, res) => {
    void (async () => {
      try {
        await writeResponse(res, await handler(await toRequest(req, baseUrl)));
      } catch (error) {
        if (!res.headersSent) res.writeHead(500);
        res.end(String(error));
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    url: baseUrl,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** Sends a WHATWG Response on `res`, its body streamed as it comes. */
export async function writeResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of response.headers) {
    if (name !== 'set-cookie') headers[name] = value;
  }
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  res.writeHead(response.status, response.statusText, headers);
  if (response.body) {
    for await (const chunk of response.body) res.write(chunk);
  }
  res.end();
}

/** The WHATWG Request of a node:http request, its body read whole. */
export async function toRequest(req: IncomingMessage, baseUrl: string): Promise<Request> {
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
