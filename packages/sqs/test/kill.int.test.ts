import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createConsumer } from '@idemq/core';
import { redisStore } from '@idemq/redis';
import { serviceUrls } from '@idemq/services';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueDepth, sqs } from '../src/index.js';
import { adminClient, clientConfig, QueueFactory, uniqueQueueName } from './helpers.js';
import { transpileForChild } from './transpileForChild.js';

/*
 * F02 on SQS: a consumer process is SIGKILLed while its handlers run. Its messages reappear
 * after their visibility timeout, a second consumer completes each of them exactly once, and
 * nothing is lost. The two processes share a Redis store and a Redis ledger of handler runs.
 */

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const admin = adminClient();
const queues = new QueueFactory(admin);
const { redis: redisUrl } = serviceUrls();
const ledger = new Redis(redisUrl);
const children: ChildProcess[] = [];

let entry = '';
beforeAll(() => {
  // The child runs plain Node: give it the package's sources compiled to JavaScript.
  entry = pathToFileURL(transpileForChild(packageDir)).href;
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await queues.deleteAll();
  admin.destroy();
  ledger.disconnect();
});

/** Resolves once the child printed `count` lines starting with `prefix`. */
function waitForLines(child: ChildProcess, prefix: string, count: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const seen: string[] = [];
    let buffer = '';
    const timer = setTimeout(
      () => reject(new Error(`child printed ${seen.length} × ${prefix}`)),
      20_000,
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) if (line.startsWith(prefix)) seen.push(line);
      if (seen.length >= count) {
        clearTimeout(timer);
        resolve(seen);
      }
    });
    child.on('exit', (code) => reject(new Error(`child exited early (${code})`)));
  });
}

describe('a consumer process killed mid-handler', () => {
  it('its messages come back after the visibility timeout and are completed once each', async () => {
    const visibilityMs = 2_000;
    const leaseMs = 3_000;
    const name = uniqueQueueName('kill');
    const url = await queues.create(name, { visibilityTimeoutMs: visibilityMs });
    const prefix = `idemq-sqs-kill-${randomUUID().slice(0, 8)}`;
    const scope = 'kill-test';
    const publisher = sqs({ clientConfig });
    const ids = Array.from({ length: 5 }, (_, i) => `kill-${i}-${randomUUID().slice(0, 8)}`);
    for (const requestId of ids) await publisher.publish(name, { requestId, body: { requestId } });

    const config = {
      entry,
      clientConfig,
      redisUrl,
      prefix,
      scope,
      queue: name,
      leaseMs,
      concurrency: 5,
    };
    const child = spawn(
      process.execPath,
      [
        fileURLToPath(new URL('./fixtures/blockingConsumer.mjs', import.meta.url)),
        JSON.stringify(config),
      ],
      {
        cwd: packageDir,
        env: { ...process.env, AWS_EC2_METADATA_DISABLED: 'true' },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    children.push(child);
    await waitForLines(child, 'STARTED', ids.length);
    const killedAt = performance.now();
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));

    const completedAt = new Map<string, number>();
    const attempts = new Map<string, { store: number; receive: number }>();
    const survivor = sqs({ clientConfig, waitTimeMs: 1_000 });
    const consumer = createConsumer<{ requestId: string }>({
      transport: survivor,
      store: redisStore({ url: redisUrl, prefix }),
      source: name,
      scope,
      leaseMs,
      concurrency: 5,
      handler: async (message, ctx) => {
        await ledger.incr(`${prefix}:ledger:started:${message.requestId}`);
        await ledger.incr(`${prefix}:ledger:completed:${message.requestId}`);
        attempts.set(message.requestId, { store: ctx.attempt, receive: message.deliveryAttempt });
      },
    });
    consumer.on('processed', ({ requestId }) => completedAt.set(requestId, performance.now()));
    await consumer.start();
    try {
      const deadline = performance.now() + 20_000;
      while (completedAt.size < ids.length && performance.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect([...completedAt.keys()].sort()).toEqual([...ids].sort());
      await consumer.stop();
      // Let any straggling copy show up: there must be none, and the queue must be empty.
      expect(await queueDepth(admin, url)).toEqual({ ready: 0, inFlight: 0, delayed: 0 });
      for (const id of ids) {
        expect(await ledger.get(`${prefix}:ledger:started:${id}`), `${id} handler runs`).toBe('2');
        expect(await ledger.get(`${prefix}:ledger:completed:${id}`), `${id} completions`).toBe('1');
        expect(attempts.get(id)?.store, `${id} store attempt`).toBe(2);
      }
      const delays = [...completedAt.values()].map((at) => Math.round(at - killedAt));
      console.info(
        `[kill test] ${ids.length} messages, visibility ${visibilityMs} ms, store lease ${leaseMs} ms: ` +
          `completed ${Math.min(...delays)}–${Math.max(...delays)} ms after SIGKILL; ` +
          `receive counts ${[...attempts.values()].map((a) => a.receive).join(',')}; ` +
          'handler runs 2 each (1 killed + 1 completed), completions 1 each',
      );
    } finally {
      await consumer.stop();
      await survivor.close();
      await publisher.close();
    }
  });
});
