import { createServer, type Server, type Socket } from 'node:net';
import { isIdemqError } from '@idemq/core';
import { afterEach, describe, expect, it } from 'vitest';
import { sqs } from './sqs.js';

/** A server that accepts connections and never answers: a hung endpoint, a black hole. */
async function blackHole(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return {
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => undefined);
  cleanup.length = 0;
});

describe('a client the transport creates', () => {
  it('fails a request the endpoint never answers after requestTimeoutMs, with a typed error', async () => {
    const hole = await blackHole();
    cleanup.push(() => hole.close());
    const transport = sqs({
      clientConfig: {
        endpoint: `http://127.0.0.1:${hole.port}`,
        region: 'elasticmq',
        credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
        maxAttempts: 1,
      },
      requestTimeoutMs: 1_500,
      waitTimeMs: 1_000,
      publishRetryMs: 0,
    });
    cleanup.push(() => transport.close());
    const startedAt = performance.now();
    const error = await transport.publish('orders', { body: { n: 1 } }).catch((e: unknown) => e);
    const waitedMs = performance.now() - startedAt;
    expect(isIdemqError(error)).toBe(true);
    expect((error as Error).message).toMatch(/requestTimeout|timed? ?out/i);
    expect(waitedMs).toBeGreaterThanOrEqual(1_400);
    expect(waitedMs).toBeLessThan(10_000);
  });

  it('refuses a request timeout that would cut its own long polls short', () => {
    expect(() => sqs({ clientConfig: {}, requestTimeoutMs: 20_000 })).toThrow(
      /requestTimeoutMs must be longer than waitTimeMs/,
    );
  });
});
