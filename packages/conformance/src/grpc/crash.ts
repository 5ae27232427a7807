import { status } from '@grpc/grpc-js';
import { expect } from 'vitest';
import { RunLog, retryPastLease } from '../runLog.js';
import type { Suite } from '../suite.js';
import { waitUntil } from '../wait.js';
import { call, type GrpcEnv, REPLAYED, text } from './grpcEnv.js';
import type { GrpcHarness } from './harness.js';

/** Short, so the case waits little for it to lapse, yet longer than a process start. */
const LEASE_MS = 3_000;

/** G12: a server process SIGKILLed in the middle of a call. */
export function registerCrashCases(suite: Suite<GrpcEnv, GrpcHarness>): void {
  const { harness } = suite;
  const startProcess = harness.startProcess;
  suite.caseUnless(
    startProcess
      ? undefined
      : 'the harness has no startProcess() (a server in a child process on a store that outlives it)',
    'G12',
    'a server SIGKILLed mid-call: the retried call gets ABORTED while the lease holds, then runs the handler again and completes it exactly once; later retries replay it',
    async (env) => {
      if (!startProcess) throw new Error('unreachable');
      const log = await RunLog.create('idemq-grpc-g12-');
      env.defer('count file', () => log.remove());
      const countFile = log.file;
      const options = { scope: env.scope, leaseMs: LEASE_MS };

      const doomed = await startProcess.call(harness, {
        options,
        implementation: { countFile, holdMs: 60_000 },
      });
      env.defer('killed process', () => doomed.close());
      const key = env.key();
      const sentAt = performance.now();
      const lost = call(env.client(doomed.address), key);
      await waitUntil(async () => (await log.lines()).length > 0, {
        timeoutMs: env.timing.waitMs,
        what: 'the handler to start in the first process',
      });
      await doomed.kill();
      expect((await lost).code, 'the client of the killed process').toBe(status.UNAVAILABLE);

      const survivor = await startProcess.call(harness, {
        options,
        implementation: { countFile, holdMs: 50 },
      });
      env.defer('process', () => survivor.close());
      const client = env.client(survivor.address);
      const { answer, refusals: aborted } = await retryPastLease({
        send: () => call(client, key),
        refused: (result) => result.code === status.ABORTED,
        onRefused: (result) => {
          expect(text(result.trailers, 'retry-after-ms')).toMatch(/^[1-9]\d*$/);
        },
        sentAt,
        leaseMs: LEASE_MS,
        timeoutMs: LEASE_MS * 3 + env.timing.waitMs,
      });
      expect(answer.code, answer.details).toBe(status.OK);
      expect(text(answer.initial, REPLAYED)).toBeUndefined();
      expect(answer.reply?.charge_id).toMatch(/^done by \d+$/);
      expect(aborted, 'ABORTED while the dead process held the lease').toBeGreaterThan(0);

      const replay = await call(client, key);
      expect(text(replay.initial, REPLAYED)).toBe('true');
      expect(replay.reply?.charge_id).toBe(answer.reply?.charge_id);
      expect(await log.counts(), 'handler starts and completions').toEqual({ starts: 2, ends: 1 });
    },
  );
}
