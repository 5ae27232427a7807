import type { SQSClient } from '@aws-sdk/client-sqs';
import type { TransportHarness } from '@idemq/conformance';
import type { Capabilities } from '@idemq/core';
import { TcpProxy } from '@idemq/services';
import { afterAll } from 'vitest';
import { deadLetterNameOf, queueDepth, type SqsTransportOptions, sqs } from '../src/index.js';
import { clientConfig, type QueueFactory, uniqueQueueName } from './helpers.js';

/** Visibility timeout of every conformance queue: C07, C19 and C20 wait around it. */
export const LEASE_MS = 2_000;

/**
 * A harness on a real ElasticMQ: every case gets a fresh queue (2 s visibility) and its DLQ;
 * every `connect()` is a new transport with its own `SQSClient`, like another process.
 * `options.waitTimeMs` picks long or short polling: closing a subscription waits for its
 * in-flight long poll, so long polls cost up to `waitTimeMs` per subscription a case closes.
 * `capabilities` is what the options must declare (from `expectedCapabilities.ts`), which C00
 * checks.
 */
export function sqsHarness(
  name: string,
  options: SqsTransportOptions,
  capabilities: Capabilities,
  admin: SQSClient,
  queues: QueueFactory,
): TransportHarness {
  const fifo = options.fifo ?? false;
  const inspector = sqs({ ...options, client: admin });
  // Every connection goes through a proxy, so C24 can cut them all as a network would.
  const target = new URL(String(clientConfig.endpoint));
  const proxy = TcpProxy.start(target.hostname, Number(target.port));
  afterAll(async () => (await proxy).close());
  return {
    name,
    capabilities,
    connect: async () =>
      sqs({
        ...options,
        clientConfig: { ...clientConfig, endpoint: `http://127.0.0.1:${(await proxy).port}` },
      }),
    interruptConnections: async () => (await proxy).cut(500),
    newSource: async () => {
      const queue = uniqueQueueName('conformance', fifo);
      await queues.create(queue, {
        visibilityTimeoutMs: LEASE_MS,
        // High enough for every case's redeliveries; the redrive itself has its own test.
        ...(options.redrive ? { deadLetter: { maxReceiveCount: 50 } } : {}),
      });
      return queue;
    },
    deadLetterOf: (source) => deadLetterNameOf(source),
    leaseMs: LEASE_MS,
    inspect: {
      depth: async (destination) => queueDepth(admin, await inspector.queueUrl(destination)),
    },
    timing: {
      waitMs: 10_000,
      quietMs: 400,
      // SQS delays are whole seconds of visibility.
      retryDelayMs: 1_000,
      delaySlackMs: 1_500,
      // SQS counts a visibility lapse from its receive, a little before the client sees the
      // message: a redelivery may come up to a round trip "early".
      delayToleranceMs: 150,
      caseTimeoutMs: 40_000,
    },
  };
}
