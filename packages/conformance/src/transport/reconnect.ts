import { expect } from 'vitest';
import type { TransportHarness } from '../harness.js';
import type { Suite } from '../suite.js';
import { waitUntil } from '../wait.js';
import type { TransportEnv } from './transportEnv.js';

/** C24: connections lost under a running consumer and publisher. */
export function registerReconnectCases(suite: Suite<TransportEnv, TransportHarness>): void {
  suite.caseUnless(
    suite.harness.interruptConnections
      ? undefined
      : 'the harness gives no interruptConnections() to cut connections with',
    'C24',
    'connections lost and back: publishing and consuming go on by themselves; nothing lost, no handler run twice',
    async (env) => {
      const source = await env.source();
      const runs = new Map<string, number>();
      const { spy } = await env.startConsumer<unknown, void>({
        source,
        handler: (message) => {
          runs.set(message.requestId, (runs.get(message.requestId) ?? 0) + 1);
        },
      });
      const publisher = await env.connect();
      const ids: string[] = [];
      const publishSome = async (count: number) => {
        for (let i = 0; i < count; i++) {
          ids.push((await publisher.publish(source, { body: { n: ids.length } })).requestId);
        }
      };
      await publishSome(10);
      await spy.waitFor(ids[0] as string, 'processed');

      await env.harness.interruptConnections?.();
      // Right after the cut: these publishes ride the reconnection (or its retries).
      await publishSome(10);
      // Reconnecting (a Kafka member rejoining its group, say) may take a while: two waits.
      const processed = () => ids.filter((id) => spy.count('processed', id) > 0).length;
      await waitUntil(() => processed() === ids.length, {
        timeoutMs: env.timing.waitMs * 2,
        everyMs: 50,
        what: 'every message processed after the cut',
      }).catch((error: unknown) => {
        throw new Error(`${String(error)}: ${processed()} of ${ids.length} processed`);
      });
      await env.quiet();
      const twice = [...runs].filter(([, n]) => n > 1).map(([id]) => id);
      expect(twice, 'handlers run more than once').toEqual([]);
      expect(ids.filter((id) => runs.get(id) !== 1)).toEqual([]);
    },
  );
}
