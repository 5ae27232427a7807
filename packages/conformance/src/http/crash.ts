import { expect } from 'vitest';
import { RunLog, retryPastLease } from '../runLog.js';
import type { Suite } from '../suite.js';
import { waitUntil } from '../wait.js';
import type { HttpHarness } from './harness.js';
import { type HttpEnv, REPLAYED, send } from './httpEnv.js';

/** Short, so the case waits little for it to lapse, yet longer than a process start. */
const LEASE_MS = 3_000;

/** H08: a server process SIGKILLed in the middle of a route. */
export function registerCrashCases(suite: Suite<HttpEnv, HttpHarness>): void {
  const { harness } = suite;
  const startProcess = harness.startProcess;
  suite.caseUnless(
    startProcess
      ? undefined
      : 'the harness has no startProcess() (a server in a child process on a store that outlives it)',
    'H08',
    'a server SIGKILLed mid-route: the retry gets 409 while the lease holds, then runs the route again and completes it exactly once; later retries replay it',
    async (env) => {
      if (!startProcess) throw new Error('unreachable');
      const log = await RunLog.create('idemq-http-h08-');
      env.defer('count file', () => log.remove());
      const countFile = log.file;
      const options = { scope: env.scope, leaseMs: LEASE_MS };

      const doomed = await startProcess.call(harness, {
        options,
        route: { countFile, holdMs: 60_000 },
      });
      env.defer('killed process', () => doomed.close());
      const key = env.key();
      const sentAt = performance.now();
      const lost = send(`${doomed.url}/r`, key).then(
        (response) => response.status,
        () => 'connection lost' as const,
      );
      await waitUntil(async () => (await log.lines()).length > 0, {
        timeoutMs: env.timing.waitMs,
        what: 'the route to start in the first process',
      });
      await doomed.kill();
      expect(await lost, 'the client of the killed process').toBe('connection lost');

      const survivor = await startProcess.call(harness, {
        options,
        route: { countFile, holdMs: 50 },
      });
      env.defer('process', () => survivor.close());
      const url = `${survivor.url}/r`;
      const { answer, refusals: conflicts } = await retryPastLease({
        send: () => send(url, key),
        refused: (response) => response.status === 409,
        onRefused: async (response) => {
          expect(response.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
          await response.arrayBuffer();
        },
        sentAt,
        leaseMs: LEASE_MS,
        timeoutMs: LEASE_MS * 3 + env.timing.waitMs,
      });
      expect(answer.status).toBe(201);
      expect(answer.headers.get(REPLAYED)).toBeNull();
      const text = await answer.text();
      expect(text).toMatch(/^done by \d+$/);
      expect(conflicts, 'a 409 while the dead process held the lease').toBeGreaterThan(0);

      const replay = await send(url, key);
      expect(replay.headers.get(REPLAYED)).toBe('true');
      expect(await replay.text()).toBe(text);
      expect(await log.counts(), 'route starts and completions').toEqual({ starts: 2, ends: 1 });
    },
  );
}
