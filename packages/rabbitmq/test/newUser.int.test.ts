import { fileURLToPath } from 'node:url';
import { ErrorCodes, TransportUnavailableError } from '@idemq/core';
import { freePort, runScript } from '@idemq/services';
import { describe, expect, inject, it } from 'vitest';
import { rabbitmq } from '../src/index.js';

const packageDir = fileURLToPath(new URL('..', import.meta.url));

describe('what a new user meets with a broker that is not there or refuses them', () => {
  it('a top-level publish to a closed port exits non-zero with a typed error, not silently with code 13', async () => {
    const port = await freePort();
    const outcome = await runScript(
      `import { rabbitmq } from './src/index.ts';
       const transport = rabbitmq({ url: 'amqp://guest:guest@127.0.0.1:${port}', connectTimeoutMs: 1000 });
       await transport.publish('payments', { requestId: 'order-42', body: { amount: 10 } });`,
      { cwd: packageDir, timeoutMs: 20_000 },
    );
    expect(outcome.timedOut).toBe(false);
    expect(outcome.code).not.toBe(13);
    expect(outcome.code).not.toBe(0);
    expect(outcome.stderr).toContain(ErrorCodes.TRANSPORT_UNAVAILABLE);
    expect(outcome.stderr).toContain(`127.0.0.1:${port}`);
    expect(outcome.stderr).toContain('ECONNREFUSED');
    // Bounded by connectTimeoutMs (plus the child's start-up), not by the OS.
    expect(outcome.elapsedMs).toBeLessThan(10_000);
  });

  it('a wrong password fails at once, not retriable, instead of waiting the connect timeout', async () => {
    const url = new URL(inject('amqp').url);
    url.username = 'guest';
    url.password = 'not-the-password';
    const transport = rabbitmq({ url: url.href, connectTimeoutMs: 20_000 });
    const startedAt = performance.now();
    const error = await transport
      .publish('payments', { requestId: 'order-42', body: { amount: 10 } })
      .then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
    await transport.close();
    expect(error).toBeInstanceOf(TransportUnavailableError);
    expect(error).toMatchObject({ code: ErrorCodes.TRANSPORT_UNAVAILABLE, retriable: false });
    expect((error as Error).message).toMatch(/refused the login.*ACCESS_REFUSED/);
    expect((error as Error).message).toContain(`${url.hostname}:${url.port || 5672}`);
    expect((error as Error).message).not.toContain('not-the-password');
    expect(performance.now() - startedAt).toBeLessThan(5_000);
  });
});
