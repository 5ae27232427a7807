import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { ErrorCodes, NonRetriableError } from '@idemq/core';
import { expect } from 'vitest';
import type { TransportHarness } from '../harness.js';
import type { Suite } from '../suite.js';
import { sleep } from '../wait.js';
import type { TransportEnv } from './transportEnv.js';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

/** C33: the events that metrics and tracing are built on. */
export function registerObservabilityCases(suite: Suite<TransportEnv, TransportHarness>): void {
  suite.case(
    'C33',
    'observability: events carry requestId, attempt and duration; dead letters carry reason and code; trace headers pass through',
    async (env) => {
      const source = await env.source();
      const published: unknown[] = [];
      const onProcessed = (payload: unknown) => published.push(payload);
      subscribe('idemq:processed', onProcessed);
      env.defer('diagnostics channel', () => unsubscribe('idemq:processed', onProcessed));

      // Long enough for a heartbeat (every lease / 3) to renew the claim at least once.
      const leaseMs = env.harness.leaseMs ?? 150;
      const slowMs = leaseMs;
      const [flaky, poison] = [env.id('flaky'), env.id('poison')];
      const traceparents: string[] = [];
      const { spy } = await env.startConsumer({
        source,
        leaseMs,
        handler: async (message, ctx) => {
          traceparents.push(message.headers.traceparent ?? '');
          if (message.requestId === poison) throw new NonRetriableError('account closed');
          if (ctx.attempt === 1) throw new Error('flaky dependency');
          await sleep(slowMs);
        },
      });
      const publisher = await env.connect();
      const { maxHeaders } = env.capabilities;
      const carriesHeaders = maxHeaders === null || maxHeaders > 0;
      const headers: Record<string, string> = carriesHeaders ? { traceparent: TRACEPARENT } : {};
      await publisher.publish(source, { requestId: flaky, body: { n: 1 }, headers });
      await publisher.publish(source, { requestId: poison, body: { n: 2 }, headers });

      const retry = (await spy.waitFor(flaky, 'retry')).data;
      expect(retry).toMatchObject({ requestId: flaky, source, attempt: 1 });
      expect(retry.delayMs).toBeGreaterThanOrEqual(0);
      expect(retry.error.message).toBe('flaky dependency');

      const processed = (await spy.waitFor(flaky, 'processed')).data;
      expect(processed).toMatchObject({ requestId: flaky, source, attempt: 2 });
      expect(processed.durationMs).toBeGreaterThanOrEqual(slowMs - 5);
      expect(Number.isFinite(processed.durationMs)).toBe(true);
      const extended = (await spy.waitFor(flaky, 'lease-extended')).data;
      expect(extended).toMatchObject({ requestId: flaky, source, leaseMs });

      const dead = (await spy.waitFor(poison, 'dead-letter')).data;
      expect(dead).toMatchObject({
        requestId: poison,
        source,
        attempt: 1,
        reason: 'account closed',
        code: ErrorCodes.HANDLER_NON_RETRIABLE,
      });

      // A broker that drops re-published ids (SQS FIFO) never shows the engine a duplicate.
      if (env.capabilities.publishDedup === false) {
        await publisher.publish(source, { requestId: flaky, body: { n: 1 } });
        expect((await spy.waitFor(flaky, 'duplicate')).data).toEqual({ requestId: flaky, source });
      }

      expect(published).toContainEqual(processed);
      if (carriesHeaders) {
        expect(traceparents).toEqual([TRACEPARENT, TRACEPARENT, TRACEPARENT]);
      }
    },
  );
}
