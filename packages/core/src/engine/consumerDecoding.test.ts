import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes } from '../errors/codes.js';
import { cloudEventIdentity } from '../ids/cloudEvents.js';
import type { ConsumerEvents } from '../observability/events.js';
import { memoryStore } from '../store/memoryStore.js';
import { type MemoryBroker, memoryBroker } from '../transport/memoryBroker.js';
import { memoryTransport } from '../transport/memoryTransport.js';
import type { Capabilities, Delivery, Transport } from '../transport/transport.js';
import { createConsumer } from './createConsumer.js';
import { decodeByContentType } from './decodeByContentType.js';
import type { ConsumedMessage, ConsumerOptions, ConsumerSettings, Handler } from './types.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});
let counter = 0;

/**
 * The memory transport, with CloudEvents read from `ce_id` / `ce_source` headers as a broker
 * adapter would (the memory transport itself has no binding to follow).
 */
function withCloudEvents(transport: Transport, capabilities: Partial<Capabilities>): Transport {
  return {
    name: transport.name,
    capabilities: { ...transport.capabilities, ...capabilities },
    publish: (destination, message) => transport.publish(destination, message),
    close: () => transport.close(),
    subscribe: (request) =>
      transport.subscribe({
        ...request,
        onDelivery: (delivery) => {
          const { headers } = delivery.message;
          const cloudEvent = cloudEventIdentity(headers.ce_id, headers.ce_source);
          request.onDelivery(
            cloudEvent ? withMessage(delivery, { ...delivery.message, cloudEvent }) : delivery,
          );
        },
      }),
  };
}

function withMessage(delivery: Delivery, message: Delivery['message']): Delivery {
  return {
    message,
    get settled() {
      return delivery.settled;
    },
    ack: () => delivery.ack(),
    retry: (options) => delivery.retry(options),
    reject: (options) => delivery.reject(options),
    release: () => delivery.release(),
    extendLease: (ms) => delivery.extendLease(ms),
  };
}

function setup(
  options: Partial<ConsumerSettings<unknown>> & {
    handler?: Handler<unknown, unknown>;
  } = {},
  capabilities: Partial<Capabilities> = {},
) {
  const id = ++counter;
  const broker: MemoryBroker = memoryBroker();
  const transport = withCloudEvents(memoryTransport({ broker }), capabilities);
  const source = `decoding-${id}`;
  const seen: ConsumedMessage<unknown>[] = [];
  const events: { [E in keyof ConsumerEvents]?: ConsumerEvents[E][] } = {};
  const consumer = createConsumer({
    transport,
    store: memoryStore(),
    scope: `scope-${id}`,
    source,
    retry: { maxAttempts: 1 },
    // One at a time: a copy then finds its id COMPLETED (a duplicate), never IN_PROGRESS.
    concurrency: 1,
    handler: (message) => {
      seen.push(message);
    },
    ...options,
  });
  for (const name of ['processed', 'duplicate', 'dead-letter'] as const) {
    consumer.on(name, (payload) => {
      const list = (events[name] ?? []) as unknown[];
      list.push(payload);
      events[name] = list as never;
    });
  }
  cleanups.push(() => transport.close());
  cleanups.push(() => consumer.stop({ timeoutMs: 50 }));
  /** A message as a producer that is not idemq would put it on the broker. */
  const foreign = (
    body: string | Uint8Array,
    extra: { contentType?: string; headers?: Record<string, string>; requestId?: string } = {},
  ) =>
    broker.publish({
      requestId: extra.requestId,
      body: typeof body === 'string' ? Buffer.from(body, 'utf8') : body,
      headers: extra.headers ?? {},
      destination: source,
      publishedAt: Date.now(),
      ...(extra.contentType === undefined ? {} : { contentType: extra.contentType }),
    });
  const settledCount = () =>
    (events.processed?.length ?? 0) +
    (events.duplicate?.length ?? 0) +
    (events['dead-letter']?.length ?? 0);
  async function waitSettled(count: number) {
    const deadline = performance.now() + 3_000;
    while (settledCount() < count) {
      if (performance.now() > deadline) throw new Error(`only ${settledCount()} of ${count}`);
      await sleep(5);
    }
  }
  return { consumer, source, seen, events, foreign, waitSettled, transport };
}

describe('createConsumer: decoding by content type', () => {
  it('hands text/plain bodies over as strings instead of dead-lettering them as malformed JSON', async () => {
    const s = setup();
    await s.consumer.start();
    s.foreign('hello from kcat', { requestId: 't-1', contentType: 'text/plain' });
    s.foreign('{"not":"parsed"}', { requestId: 't-2', contentType: 'text/plain; charset=utf-8' });
    await s.waitSettled(2);
    expect(s.events['dead-letter']).toBeUndefined();
    expect(s.seen.map((m) => m.value)).toEqual(['hello from kcat', '{"not":"parsed"}']);
  });

  it('parses application/json, +json and untyped bodies; hands other types over as bytes', async () => {
    const s = setup();
    await s.consumer.start();
    const binary = new Uint8Array([0, 255, 7]);
    s.foreign('{"a":1}', { requestId: 'j-1', contentType: 'application/json' });
    s.foreign('{"b":2}', { requestId: 'j-2', contentType: 'application/cloudevents+json' });
    s.foreign('{"c":3}', { requestId: 'j-3' });
    s.foreign(binary, { requestId: 'b-1', contentType: 'application/octet-stream' });
    await s.waitSettled(4);
    const byId = new Map(s.seen.map((m) => [m.requestId, m.value]));
    expect(byId.get('j-1')).toEqual({ a: 1 });
    expect(byId.get('j-2')).toEqual({ b: 2 });
    expect(byId.get('j-3')).toEqual({ c: 3 });
    expect(byId.get('b-1')).toBeInstanceOf(Uint8Array);
    expect([...(byId.get('b-1') as Uint8Array)]).toEqual([0, 255, 7]);
  });

  it('still dead-letters malformed JSON and invalid text as IDEMQ_ERR_PAYLOAD_MALFORMED', async () => {
    const s = setup();
    await s.consumer.start();
    s.foreign('{"a":', { requestId: 'm-1', contentType: 'application/json' });
    s.foreign(new Uint8Array([0x61, 0xff]), { requestId: 'm-2', contentType: 'text/plain' });
    await s.waitSettled(2);
    expect(s.events['dead-letter']?.map((d) => d.code)).toEqual([
      ErrorCodes.PAYLOAD_MALFORMED,
      ErrorCodes.PAYLOAD_MALFORMED,
    ]);
    expect(s.seen).toHaveLength(0);
  });

  it('a custom decode replaces the default for every type and can fall back to it', async () => {
    const s = setup({
      decode: (body, message) =>
        message.contentType === 'application/x-upper'
          ? Buffer.from(body).toString('utf8').toUpperCase()
          : decodeByContentType(body, message.contentType),
    });
    await s.consumer.start();
    s.foreign('shout', { requestId: 'u-1', contentType: 'application/x-upper' });
    s.foreign('quiet', { requestId: 'u-2', contentType: 'text/plain' });
    await s.waitSettled(2);
    expect(s.seen.map((m) => m.value)).toEqual(['SHOUT', 'quiet']);
  });
});

describe('createConsumer: maxPayloadBytes', () => {
  it('processes a body of exactly maxPayloadBytes, dead-letters one byte more undecoded, and goes on', async () => {
    const s = setup({ maxPayloadBytes: 16 });
    await s.consumer.start();
    s.foreign('x'.repeat(16), { requestId: 'fits', contentType: 'text/plain' });
    s.foreign('x'.repeat(17), { requestId: 'over', contentType: 'text/plain' });
    s.foreign('after', { requestId: 'after', contentType: 'text/plain' });
    await s.waitSettled(3);
    expect(s.seen.map((m) => m.requestId)).toEqual(['fits', 'after']);
    expect(s.events['dead-letter']).toEqual([
      expect.objectContaining({ requestId: 'over', code: ErrorCodes.PAYLOAD_TOO_LARGE }),
    ]);
    expect(s.events['dead-letter']?.[0]?.reason).toMatch(/17 bytes, over .* 16-byte limit/);
  });

  it("defaults to the transport's maxPayloadBytes, and to no limit when it declares none", async () => {
    const limited = setup({}, { maxPayloadBytes: 4 });
    await limited.consumer.start();
    limited.foreign('four', { requestId: 'fits', contentType: 'text/plain' });
    limited.foreign('five!', { requestId: 'over', contentType: 'text/plain' });
    await limited.waitSettled(2);
    expect(limited.seen.map((m) => m.requestId)).toEqual(['fits']);
    expect(limited.events['dead-letter']?.map((d) => d.code)).toEqual([
      ErrorCodes.PAYLOAD_TOO_LARGE,
    ]);

    const unlimited = setup();
    expect(unlimited.transport.capabilities.maxPayloadBytes).toBeNull();
    await unlimited.consumer.start();
    unlimited.foreign('x'.repeat(100_000), { requestId: 'big', contentType: 'text/plain' });
    await unlimited.waitSettled(1);
    expect(unlimited.seen.map((m) => m.requestId)).toEqual(['big']);
  });

  it('refuses a maxPayloadBytes that is not a positive integer', () => {
    expect(() => setup({ maxPayloadBytes: 0 })).toThrow(/maxPayloadBytes/);
  });
});

describe('createConsumer: requestIdFrom cloudevents', () => {
  const ce = (source: string, id: string) => ({ ce_source: source, ce_id: id });

  it('runs each (source, id) once and skips its copies', async () => {
    const s = setup({ requestIdFrom: 'cloudevents' });
    await s.consumer.start();
    s.foreign('1', { headers: ce('/orders', 'e-1') });
    s.foreign('1', { headers: ce('/orders', 'e-1') });
    s.foreign('2', { headers: ce('/billing', 'e-1') }); // same id, other source: another event
    s.foreign('3', { headers: ce('/orders', 'e-2') });
    await s.waitSettled(4);
    expect(s.seen.map((m) => m.requestId).sort()).toEqual([
      'ce:7:/orders:e-1',
      'ce:7:/orders:e-2',
      'ce:8:/billing:e-1',
    ]);
    expect(s.events.duplicate?.map((d) => d.requestId)).toEqual(['ce:7:/orders:e-1']);
  });

  it('takes the CloudEvent over the transport requestId, and the transport one without it', async () => {
    const s = setup({ requestIdFrom: 'cloudevents' });
    await s.consumer.start();
    s.foreign('1', { requestId: 'broker-id-1', headers: ce('/orders', 'e-9') });
    s.foreign('1', { requestId: 'broker-id-2', headers: ce('/orders', 'e-9') });
    s.foreign('2', { requestId: 'plain-id' });
    await s.waitSettled(3);
    expect(s.seen.map((m) => m.requestId)).toEqual(['ce:7:/orders:e-9', 'plain-id']);
    expect(s.events.duplicate).toHaveLength(1);
  });

  it('dead-letters an event with an id but no source', async () => {
    const s = setup({ requestIdFrom: 'cloudevents' });
    await s.consumer.start();
    s.foreign('1', { requestId: 'ignored', headers: { ce_id: 'e-1' } });
    await s.waitSettled(1);
    expect(s.events['dead-letter']?.[0]).toMatchObject({
      requestId: undefined,
      code: ErrorCodes.REQUEST_ID_MISSING,
    });
    expect(s.events['dead-letter']?.[0]?.reason).toMatch(/no source/);
    expect(s.seen).toHaveLength(0);
  });

  it('by default ignores CloudEvents attributes and keeps the transport requestId', async () => {
    const s = setup();
    await s.consumer.start();
    s.foreign('1', { requestId: 'r-1', headers: ce('/orders', 'e-1') });
    s.foreign('1', { requestId: 'r-2', headers: ce('/orders', 'e-1') });
    await s.waitSettled(2);
    expect(s.seen.map((m) => m.requestId)).toEqual(['r-1', 'r-2']);
  });

  it('refuses an unknown requestIdFrom', () => {
    expect(() =>
      setup({
        requestIdFrom: 'ce' as unknown as ConsumerOptions<unknown, unknown>['requestIdFrom'],
      }),
    ).toThrow(/requestIdFrom must be one of/);
  });
});
