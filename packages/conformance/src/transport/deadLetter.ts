import { DeadLetterHeaders, ErrorCodes, type StandardSchemaV1 } from '@idemq/core';
import { expect } from 'vitest';
import type { TransportHarness } from '../harness.js';
import type { Suite } from '../suite.js';
import { bytes } from './expectations.js';
import type { TransportEnv } from './transportEnv.js';

interface Order {
  amount: number;
}

/** A hand-written Standard Schema validator: what zod or valibot would hand the consumer. */
const orderSchema: StandardSchemaV1<unknown, Order> = {
  '~standard': {
    version: 1,
    vendor: 'idemq-conformance',
    validate: (value) =>
      typeof value === 'object' &&
      value !== null &&
      'amount' in value &&
      typeof value.amount === 'number' &&
      value.amount > 0
        ? { value: { amount: value.amount } }
        : { issues: [{ message: 'must be a positive number', path: ['amount'] }] },
  },
};

/** C11 and C32: the engine dead-letters what it must, with the reason, and nothing else. */
export function registerDeadLetterCases(suite: Suite<TransportEnv, TransportHarness>): void {
  suite.case(
    'C11',
    'max attempts: after N failures the message is dead-lettered with body, reason, attempts and source, and not redelivered',
    async (env) => {
      const source = await env.source();
      const maxAttempts = 3;
      const { spy } = await env.startConsumer({
        source,
        retry: { maxAttempts },
        handler: () => {
          throw new Error('boom');
        },
      });
      const publisher = await env.connect();
      const id = env.id();
      const body = { order: 11 };
      await publisher.publish(source, { requestId: id, body });

      const { data: event } = await spy.waitFor(id, 'dead-letter');
      expect(event).toMatchObject({ source, attempt: maxAttempts, code: ErrorCodes.MAX_ATTEMPTS });
      expect(event.reason).toContain('boom');
      expect(
        spy.all('handler-started', id).map((r) => r.data.ctx.attempt),
        'attempts the handler saw',
      ).toEqual([1, 2, 3]);
      expect(spy.count('retry', id)).toBe(maxAttempts - 1);

      const [dead] = await env.deadLetters(source, 1);
      expect(dead?.message.requestId).toBe(id);
      expect(bytes(dead?.message.body ?? new Uint8Array())).toEqual(bytes(JSON.stringify(body)));
      const headers = dead?.message.headers ?? {};
      expect(headers[DeadLetterHeaders.reason]).toContain('boom');
      expect(headers).toMatchObject({
        [DeadLetterHeaders.code]: ErrorCodes.MAX_ATTEMPTS,
        [DeadLetterHeaders.attempts]: String(maxAttempts),
        [DeadLetterHeaders.source]: source,
      });

      await env.quiet();
      expect(spy.count('delivered', id), 'deliveries from the source').toBe(maxAttempts);
      await env.expectEmpty(source);
    },
  );

  suite.case(
    'C32',
    'schema rejection: invalid or malformed payloads are dead-lettered once, never retried; valid ones flow',
    async (env) => {
      const source = await env.source();
      const values: Order[] = [];
      const { spy } = await env.startConsumer<Order, void>({
        source,
        schema: orderSchema,
        handler: (message) => {
          values.push(message.value);
        },
      });
      const publisher = await env.connect();
      const [invalid, malformed, valid] = [env.id('invalid'), env.id('malformed'), env.id('valid')];
      await publisher.publish(source, { requestId: invalid, body: { amount: 'ten' } });
      await publisher.publish(source, {
        requestId: malformed,
        body: '{"amount": 1',
        contentType: 'application/json',
      });
      await publisher.publish(source, { requestId: valid, body: { amount: 10 } });

      await spy.waitFor(valid, 'processed');
      expect(values).toEqual([{ amount: 10 }]);
      const invalidEvent = (await spy.waitFor(invalid, 'dead-letter')).data;
      expect(invalidEvent).toMatchObject({ source, code: ErrorCodes.PAYLOAD_INVALID });
      expect(invalidEvent.reason).toContain('amount');
      const malformedEvent = (await spy.waitFor(malformed, 'dead-letter')).data;
      expect(malformedEvent).toMatchObject({ source, code: ErrorCodes.PAYLOAD_MALFORMED });

      const dead = await env.deadLetters(source, 2);
      const codes = Object.fromEntries(
        dead.map((d) => [String(d.message.requestId), d.message.headers[DeadLetterHeaders.code]]),
      );
      expect(codes).toEqual({
        [invalid]: ErrorCodes.PAYLOAD_INVALID,
        [malformed]: ErrorCodes.PAYLOAD_MALFORMED,
      });

      await env.quiet();
      for (const id of [invalid, malformed]) {
        expect(spy.count('delivered', id), `${id} deliveries`).toBe(1);
        expect(spy.count('handler-started', id), `${id} handler runs`).toBe(0);
      }
    },
  );
}
