/**
 * A TCP proxy in front of a broker (ElasticMQ for SQS's F04): `cut(ms)` resets every open
 * connection and refuses new ones for `ms`, as a restarting broker would, without touching the
 * shared broker process.
 */
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net';
import { freePort } from './storeServer.js';

export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private refusingUntil = 0;
  cuts = 0;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetHost: string, targetPort: number): Promise<TcpProxy> {
    const port = await freePort();
    let proxy: TcpProxy | undefined;
    const server = createServer((client) => proxy?.accept(client, targetHost, targetPort));
    proxy = new TcpProxy(server, port);
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return proxy;
  }

  private accept(client: Socket, host: string, port: number): void {
    if (Date.now() < this.refusingUntil) {
      client.resetAndDestroy();
      return;
    }
    const upstream = netConnect({ host, port });
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }

  /** Resets every connection and refuses new ones for `downMs`. */
  cut(downMs: number): void {
    this.refusingUntil = Date.now() + downMs;
    for (const socket of this.sockets) socket.resetAndDestroy();
    this.cuts++;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
