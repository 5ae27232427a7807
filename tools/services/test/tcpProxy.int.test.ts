import { createServer, connect as netConnect, type Server } from 'node:net';
import { TcpProxy } from '@idemq/services';
import { afterEach, describe, expect, it } from 'vitest';

const opened: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((close) => close()));
});

/** A server on a free loopback port that answers every line it reads with `reply`. */
async function replyServer(reply: Buffer): Promise<number> {
  const server: Server = createServer((socket) => {
    socket.on('data', () => socket.write(reply));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  opened.push(() => new Promise((resolve) => server.close(resolve)));
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('no address');
  return address.port;
}

/** Connects through the proxy, sends one line, and collects what comes back until close. */
async function exchange(port: number): Promise<{ received: Buffer }> {
  const socket = netConnect({ host: '127.0.0.1', port });
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.write('ask\n');
  return new Promise((resolve) => {
    socket.once('close', () => resolve({ received: Buffer.concat(chunks) }));
    // A connection the proxy leaves open is closed by the caller after its first reply.
    socket.once('data', () => setTimeout(() => socket.end(), 200));
  });
}

describe('TcpProxy.cutMidStream', () => {
  it('passes on only the first bytes of the next reply, then closes that connection', async () => {
    const reply = Buffer.from('0123456789abcdef');
    const proxy = await TcpProxy.start('127.0.0.1', await replyServer(reply));
    opened.push(() => proxy.close());

    const cut = proxy.cutMidStream(6);
    const { received } = await exchange(proxy.port);
    await cut;
    expect(received.toString()).toBe('012345');
    expect(proxy.cuts).toBe(1);

    // The next connection goes through whole.
    const again = await exchange(proxy.port);
    expect(again.received.toString()).toBe(reply.toString());
    expect(proxy.cuts).toBe(1);
  });

  it('leaves replies no longer than the cut alone and cuts the first longer one', async () => {
    const proxy = await TcpProxy.start('127.0.0.1', await replyServer(Buffer.from('abc')));
    opened.push(() => proxy.close());
    let done = false;
    void proxy.cutMidStream(3).then(() => {
      done = true;
    });
    const { received } = await exchange(proxy.port);
    expect(received.toString()).toBe('abc');
    expect(done).toBe(false);
    expect(proxy.cuts).toBe(0);
  });
});
