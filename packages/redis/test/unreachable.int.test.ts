import { fileURLToPath } from 'node:url';
import {
  createIdempotency,
  ErrorCodes,
  InvalidOptionsError,
  StoreUnavailableError,
} from '@idemq/core';
import { freePort, runScript } from '@idemq/services';
import { describe, expect, it } from 'vitest';
import { redisStore } from '../src/index.js';

const packageDir = fileURLToPath(new URL('..', import.meta.url));

describe('a store whose Redis is not there, as a new user meets it', () => {
  it.each(['not a url', 'http://127.0.0.1:6379', '127.0.0.1:6379'])(
    'refuses the url %j with InvalidOptionsError, not a raw TypeError',
    (url) => {
      expect(() => redisStore({ url })).toThrow(InvalidOptionsError);
      expect(() => redisStore({ url })).toThrow(/url must be a redis:\/\/ or rediss:\/\/ URL/);
    },
  );

  it('ready() names host:port and the cause (ECONNREFUSED), not only "connect timed out"', async () => {
    const port = await freePort();
    const store = redisStore({ url: `redis://127.0.0.1:${port}`, commandTimeoutMs: 300 });
    const error = await store.ready().then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    await store.close();
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toMatch(
      new RegExp(`^Redis at 127\\.0\\.0\\.1:${port} is unreachable: .*ECONNREFUSED`),
    );
    expect((error as Error).cause).toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('run() says the store is unreachable, not "max retries per request", and keeps the cause', async () => {
    const port = await freePort();
    const store = redisStore({ url: `redis://127.0.0.1:${port}` });
    const idempotency = createIdempotency({ store, scope: 'billing' });
    const error = await idempotency
      .run('order-42', () => 'charged')
      .then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
    await store.close();
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(error).toMatchObject({ code: ErrorCodes.STORE_UNAVAILABLE, retriable: true });
    const { message, cause } = error as Error;
    expect(message).toMatch(
      new RegExp(`^Redis at 127\\.0\\.0\\.1:${port} is unreachable: claim failed: .*ECONNREFUSED`),
    );
    expect(message).not.toMatch(/maxRetriesPerRequest/);
    expect(cause).toBeInstanceOf(Error);
  });

  it('a script that catches the error and never calls close() still exits', async () => {
    const port = await freePort();
    const outcome = await runScript(
      `import { createIdempotency } from '@idemq/core';
       import { redisStore } from './src/index.ts';
       const store = redisStore({ url: 'redis://127.0.0.1:${port}' });
       try {
         await createIdempotency({ store, scope: 'billing' }).run('order-42', () => 'charged');
       } catch (error) {
         console.log('caught', error.code);
       }`,
      { cwd: packageDir, timeoutMs: 15_000 },
    );
    expect(outcome.timedOut).toBe(false);
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toContain(`caught ${ErrorCodes.STORE_UNAVAILABLE}`);
  });
});
