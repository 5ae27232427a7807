import { createServer, type IncomingMessage } from 'node:http';
import type { Store } from '@idemq/core';
import { afterEach, describe, expect, it } from 'vitest';
import { problemTypeUri } from '../src/index.js';
import { idempotency, type NodeIdempotencyOptions, type NodeRoute } from '../src/node/index.js';
import { bytesOf, post, STORES } from './helpers.js';
import { close, listen } from './listen.js';

const servers: ReturnType<typeof createServer>[] = [];
const stores: Store[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => close(server)));
  await Promise.all(stores.splice(0).map((store) => store.close()));
});

describe.each(STORES)('@idemq/http/node idempotency() ($name store)', ({ make }) => {
  const serve = async (
    route: NodeRoute,
    options: Omit<NodeIdempotencyOptions, 'store'> = {},
  ): Promise<string> => {
    const store = make();
    stores.push(store);
    const listener = idempotency({ store, ...options })(route);
    const server = createServer((req, res) => void listener(req, res));
    servers.push(server);
    return listen(server);
  };

  it('runs the route once with the body it read, and replays status, allowed headers and bytes', async () => {
    const seen: { body: string; key: string | undefined; token: number | undefined }[] = [];
    const base = await serve(async (req, ctx) => {
      seen.push({
        body: new TextDecoder().decode(await ctx.body()),
        key: ctx.idempotencyKey,
        token: ctx.fencingToken,
      });
      return {
        status: 201,
        headers: {
          'content-type': 'application/json',
          location: `/orders${req.url}`,
          'set-cookie': ['a=1', 'b=2'],
          'x-trace': 'one',
        },
        body: JSON.stringify({ ok: true }),
      };
    });
    const first = await post(`${base}/7`, '"k-1"');
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(first.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(first.headers.get('content-length')).toBe('11');
    const firstBytes = await bytesOf(first);

    const replay = await post(`${base}/7`, '"k-1"');
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.headers.get('location')).toBe('/orders/7');
    expect(replay.headers.get('content-type')).toBe('application/json');
    expect(replay.headers.getSetCookie()).toEqual([]);
    expect(replay.headers.get('x-trace')).toBeNull();
    expect(await bytesOf(replay)).toEqual(firstBytes);
    expect(seen).toEqual([{ body: '{"amount":10}', key: 'k-1', token: expect.any(Number) }]);
  });

  it('replays each set-cookie line apart when the allow-list names it', async () => {
    const base = await serve(
      async () => ({ status: 200, headers: { 'Set-Cookie': ['a=1', 'b=2'] }, body: 'ok' }),
      { replayHeaders: ['set-cookie'] },
    );
    await (await post(base, 'k-cookies')).arrayBuffer();
    const replay = await post(base, 'k-cookies');
    expect(replay.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await replay.text()).toBe('ok');
  });

  it('passes other methods and keyless requests (optional mode) through with the body on ctx.body()', async () => {
    const base = await serve(
      async (req, ctx) => ({
        status: 200,
        body: `${req.method} ${ctx.idempotencyKey} ${new TextDecoder().decode(await ctx.body())}`,
      }),
      { required: false },
    );
    const put = await fetch(base, { method: 'PUT', body: 'upload' });
    expect(await put.text()).toBe('PUT undefined upload');
    const keyless = await post(base, undefined, 'plain');
    expect(await keyless.text()).toBe('POST undefined plain');
  });

  it('answers a missing key with a 400 problem and never runs the route', async () => {
    let runs = 0;
    const base = await serve(async () => {
      runs += 1;
      return { status: 200 };
    });
    const response = await post(base, undefined);
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(((await response.json()) as { type: string }).type).toBe(problemTypeUri('key-missing'));
    expect(runs).toBe(0);
  });

  it('a thrown route reaches onError and its client gets a 500 problem; the retry runs it again', async () => {
    const errors: unknown[] = [];
    let runs = 0;
    const base = await serve(
      async (_req, ctx) => {
        runs += 1;
        if (ctx.attempt === 1) throw new Error('card declined by a flaky bank');
        return { status: 201, body: 'paid' };
      },
      { onError: (error) => errors.push(error) },
    );
    const failed = await post(base, 'k-throw');
    expect(failed.status).toBe(500);
    expect(((await failed.json()) as { type: string }).type).toBe(problemTypeUri('handler-failed'));
    expect(errors).toEqual([new Error('card declined by a flaky bank')]);
    const retried = await post(base, 'k-throw');
    expect(retried.status).toBe(201);
    expect(await retried.text()).toBe('paid');
    expect(runs).toBe(2);
  });

  it('a route that throws on a passed-through request is reported once and answered 500', async () => {
    const errors: unknown[] = [];
    const base = await serve(
      async () => {
        throw new Error('boom');
      },
      { onError: (error) => errors.push(error) },
    );
    const response = await fetch(base);
    expect(response.status).toBe(500);
    expect(errors).toEqual([new Error('boom')]);
  });

  it('an answer with an impossible status is a 500, reported, and left FAILED for the retry', async () => {
    const errors: unknown[] = [];
    let status = 99;
    const base = await serve(async () => ({ status }), {
      onError: (error) => errors.push(error),
    });
    expect((await post(base, 'k-status')).status).toBe(500);
    expect(String(errors[0])).toMatch(/status from 200 to 599, got 99/);
    status = 204;
    expect((await post(base, 'k-status')).status).toBe(204);
  });

  it('streams a body past maxResponseBytes whole to its client and replays it marked body-omitted', async () => {
    const chunks = ['a'.repeat(600), 'b'.repeat(600), 'c'.repeat(600)];
    const base = await serve(
      async () => ({
        status: 200,
        headers: { 'content-type': 'text/plain' },
        body: (async function* () {
          yield* chunks;
        })(),
      }),
      { maxResponseBytes: 1000 },
    );
    const first = await post(base, 'k-large');
    expect(await first.text()).toBe(chunks.join(''));
    const replay = await post(base, 'k-large');
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-body-omitted')).toBe('too-large');
    expect(await replay.text()).toBe('');
  });

  it('scopes keys by principal and fingerprints through hooks that get the IncomingMessage', async () => {
    const principals: string[] = [];
    const base = await serve(
      async (req) => ({ status: 200, body: `for ${req.headers['x-tenant']}` }),
      {
        principal: (req: IncomingMessage) => {
          const tenant = String(req.headers['x-tenant']);
          principals.push(tenant);
          return tenant;
        },
      },
    );
    const a = await post(base, 'shared', '{}', { 'x-tenant': 'acme' });
    const b = await post(base, 'shared', '{}', { 'x-tenant': 'globex' });
    expect(await a.text()).toBe('for acme');
    expect(await b.text()).toBe('for globex');
    const replayA = await post(base, 'shared', '{}', { 'x-tenant': 'acme' });
    expect(await replayA.text()).toBe('for acme');
    expect(replayA.headers.get('idempotent-replayed')).toBe('true');
    expect(principals).toEqual(['acme', 'globex', 'acme']);
    const otherBody = await post(base, 'shared', '{"amount":1}', { 'x-tenant': 'acme' });
    expect(otherBody.status).toBe(422);
  });
});

describe('@idemq/http/node options', () => {
  it('names the binding in the typed error for bad options', () => {
    expect(() =>
      idempotency({
        store: STORES[0]!.make(),
        methods: 'POST',
      } as unknown as NodeIdempotencyOptions),
    ).toThrow(/idempotency \(@idemq\/http\/node\).*methods must be an array/s);
    expect(() =>
      idempotency({
        store: STORES[0]!.make(),
        onError: 'log',
      } as unknown as NodeIdempotencyOptions),
    ).toThrow(/onError/);
  });
});
