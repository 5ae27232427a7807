import { memoryStore, type Store, uuidv7 } from '@idemq/core';
import { redisStore } from '@idemq/redis';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** The stores every behaviour is checked on: memory and a real Redis (own key prefix). */
export const STORES: readonly { name: string; make: () => Store }[] = [
  { name: 'memory', make: () => memoryStore() },
  {
    name: 'redis',
    make: () => redisStore({ url: REDIS_URL, prefix: `idemq-http-test-${uuidv7()}` }),
  },
];

/** A POST with an Idempotency-Key (bare unless quoted by the caller). */
export function post(
  url: string,
  key: string | undefined,
  body: RequestInit['body'] = '{"amount":10}',
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(key === undefined ? {} : { 'idempotency-key': key }),
      ...headers,
    },
    body,
  });
}

/** A promise with its resolver, to hold a route until the test lets it go. */
export function gate(): { opened: Promise<void>; open: () => void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

export async function bytesOf(response: Response): Promise<Uint8Array> {
  return new Uint8Array(await response.arrayBuffer());
}
