import { ErrorCodes, isIdemqError } from '@idemq/core';
import { expect } from 'vitest';
import type { TransportHarness } from '../harness.js';
import type { Suite } from '../suite.js';
import type { TransportEnv } from './transportEnv.js';

/** C35: what a closed connection still answers. */
export function registerAfterCloseCases(suite: Suite<TransportEnv, TransportHarness>): void {
  suite.case(
    'C35',
    'after close (connection): publish and subscribe reject with IDEMQ_ERR_TRANSPORT_CLOSED; every verb of a delivery it held resolves false',
    async (env) => {
      const source = await env.source();
      const transport = await env.connect();
      const spy = env.spy();
      await env.subscribe(transport, { source, spy });
      const id = env.id();
      await transport.publish(source, { requestId: id, body: 'held' });
      const held = (await spy.waitFor(id, 'delivered')).data.delivery;

      await Promise.all([transport.close(), transport.close()]);

      expect(await held.extendLease(1_000), 'extendLease after close').toBe(false);
      expect(await held.reject({ reason: 'late' }), 'reject after close').toBe(false);
      expect(await held.ack(), 'ack after close').toBe(false);
      expect(await held.retry(), 'retry after close').toBe(false);
      expect(await held.release(), 'release after close').toBe(false);

      const refusals: Array<[string, () => Promise<unknown>]> = [
        ['publish', () => transport.publish(source, { body: 'after close' })],
        [
          'subscribe',
          () => transport.subscribe({ source, maxInFlight: 1, onDelivery: () => undefined }),
        ],
      ];
      for (const [name, operation] of refusals) {
        const reason = await operation().then(
          (value) => ({ resolved: value }),
          (rejected: unknown) => rejected,
        );
        expect(isIdemqError(reason), `${name} after close(): got ${String(reason)}`).toBe(true);
        expect(reason, name).toMatchObject({ code: ErrorCodes.TRANSPORT_CLOSED, retriable: false });
      }
      await env.expectNoDeadLetters(source);
    },
  );
}
