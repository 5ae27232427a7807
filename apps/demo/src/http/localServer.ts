/** node:http on 127.0.0.1: the server the demo's payments API runs on. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LocalServer {
  /** `http://127.0.0.1:<port>`, the port chosen by the OS. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serves `listener` on 127.0.0.1 (a port the OS picks). A client that went away does not stop
 * the route: it still finishes and its outcome is still recorded.
 */
export async function listenLocally(
  listener: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
): Promise<LocalServer> {
  const server = createServer((req, res) => void listener(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
