import { fileURLToPath } from 'node:url';
import { ErrorCodes, TransportUnavailableError } from '@idemq/core';
import { freePort, runScript } from '@idemq/services';
import { describe, expect, it } from 'vitest';
import { kafka } from '../src/index.js';

const packageDir = fileURLToPath(new URL('..', import.meta.url));

describe('what a new user meets with a broker that is not there', () => {
  it('a top-level publish to a closed port exits non-zero with a typed error naming the broker', async () => {
    const port = await freePort();
    const outcome = await runScript(
      `import { kafka } from './src/index.ts';
       const transport = kafka({ brokers: ['127.0.0.1:${port}'] });
       await transport.publish('payments', { requestId: 'order-42', body: { amount: 10 } });`,
      { cwd: packageDir, timeoutMs: 60_000 },
    );
    expect(outcome.timedOut).toBe(false);
    expect(outcome.code).not.toBe(0);
    expect(outcome.code).not.toBe(13);
    expect(outcome.stderr).toContain(ErrorCodes.TRANSPORT_UNAVAILABLE);
    expect(outcome.stderr).toContain(`Kafka at 127.0.0.1:${port} could not be reached`);
    expect(outcome.stderr).toContain('ECONNREFUSED');
  }, 70_000);

  it('a subscribe to a closed port rejects with the same typed error', async () => {
    const port = await freePort();
    const transport = kafka({ brokers: [`127.0.0.1:${port}`] });
    const error = await transport
      .subscribe({ source: 'payments', maxInFlight: 1, onDelivery: () => {} })
      .then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
    await transport.close();
    expect(error).toBeInstanceOf(TransportUnavailableError);
    expect(error).toMatchObject({ code: ErrorCodes.TRANSPORT_UNAVAILABLE, retriable: true });
    expect((error as Error).message).toMatch(
      new RegExp(`^Kafka at 127\\.0\\.0\\.1:${port} could not be reached: .*ECONNREFUSED`),
    );
  }, 60_000);
});
