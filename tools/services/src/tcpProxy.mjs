/**
 * Test tools for network faults: a free loopback port, and a TCP proxy in front of a service
 * that can cut every connection and refuse new ones for a while, as a restarting broker would,
 * without touching the shared service itself.
 */
import { createServer, connect as netConnect } from 'node:net';

/** A TCP port free on 127.0.0.1 right now. @returns {Promise<number>} */
export async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

export class TcpProxy {
  /** @type {Set<import('node:net').Socket>} */
  #sockets = new Set();
  #refusingUntil = 0;
  /** @type {{ bytes: number, done: () => void } | undefined} */
  #midStreamCut;
  /** @type {import('node:net').Server} */
  #server;
  cuts = 0;

  /** @param {import('node:net').Server} server @param {number} port */
  constructor(server, port) {
    this.#server = server;
    this.port = port;
  }

  /**
   * A proxy on a free 127.0.0.1 port forwarding to `targetHost:targetPort`.
   * @param {string} targetHost
   * @param {number} targetPort
   */
  static async start(targetHost, targetPort) {
    const port = await freePort();
    /** @type {TcpProxy | undefined} */
    let proxy;
    const server = createServer((client) => {
      if (proxy) proxy.#accept(client, targetHost, targetPort);
      else client.destroy();
    });
    proxy = new TcpProxy(server, port);
    await new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(undefined)));
    return proxy;
  }

  /** @param {import('node:net').Socket} client @param {string} host @param {number} port */
  #accept(client, host, port) {
    if (Date.now() < this.#refusingUntil) {
      client.resetAndDestroy();
      return;
    }
    const upstream = netConnect({ host, port });
    for (const socket of [client, upstream]) {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream);
    // Forwarded by hand (not piped) so that `cutMidStream` can end a connection part-way.
    upstream.on('data', (chunk) => this.#toClient(chunk, client, upstream));
    client.on('drain', () => upstream.resume());
    client.on('close', () => upstream.destroy());
    // A connection cut mid-stream is already ending: let its last bytes reach the client.
    upstream.on('close', () => client.writableEnded || client.destroy());
  }

  /**
   * @param {Buffer} chunk
   * @param {import('node:net').Socket} client
   * @param {import('node:net').Socket} upstream
   */
  #toClient(chunk, client, upstream) {
    const cut = this.#midStreamCut;
    if (cut && chunk.length > cut.bytes) {
      this.#midStreamCut = undefined;
      this.cuts++;
      client.once('close', cut.done);
      client.end(chunk.subarray(0, cut.bytes));
      upstream.destroy();
      return;
    }
    if (!client.write(chunk)) upstream.pause();
  }

  /**
   * Ends the connection that next receives more than `bytes` bytes at once from the target,
   * after passing on only the first `bytes` of them: the client sees a reply cut short, then
   * the connection closed. New connections are accepted as usual. Resolves once it happened.
   * @param {number} bytes
   * @returns {Promise<void>}
   */
  cutMidStream(bytes) {
    return new Promise((resolve) => {
      this.#midStreamCut = { bytes, done: () => resolve(undefined) };
    });
  }

  /** Resets every connection and refuses new ones for `downMs`. @param {number} downMs */
  cut(downMs) {
    this.#refusingUntil = Date.now() + downMs;
    for (const socket of this.#sockets) socket.resetAndDestroy();
    this.cuts++;
  }

  async close() {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise((resolve) => this.#server.close(() => resolve(undefined)));
  }
}

/**
 * A socket factory that remembers the sockets it opened (for clients that take one, such as
 * kafkajs's `socketFactory`), so a test can cut them all at once as a network failure would.
 */
export function trackedSockets() {
  /** @type {Set<import('node:net').Socket>} */
  const sockets = new Set();
  return {
    /** @param {{ host: string, port: number, onConnect: () => void }} target */
    socketFactory: ({ host, port, onConnect }) => {
      const socket = netConnect({ host, port }, onConnect);
      socket.setKeepAlive(true, 60_000);
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      return socket;
    },
    /** Destroys every open socket; returns how many there were. */
    cut() {
      const count = sockets.size;
      for (const socket of sockets) socket.destroy(new Error('connection cut (test)'));
      return count;
    },
  };
}
