import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { CachePersistenceLayer } from '@aws-lambda-powertools/idempotency/cache';
import { createClient } from '@redis/client';
import type { Context } from 'aws-lambda';
import { CommandCounter, countNodeRedis } from '../commandCounter.js';
import { globEscape } from '../redisInfo.js';
import type { BenchMessage } from '../workload.js';
import { type ContenderSetup, RETENTION, type RedisContender } from './types.js';

/** What the wrapped function receives; `handled` tells a processed message from a duplicate. */
interface PowertoolsEvent extends BenchMessage {
  handled?: boolean;
}

/**
 * A stand-in Lambda context for a long-running consumer. Powertools takes the in-progress expiry
 * (its lease) from `getRemainingTimeInMillis()`; the docs tell functions wrapped outside the
 * handler to `registerLambdaContext`. Without one it logs "Could not determine remaining time
 * left" on every call and in-progress records never expire before the record itself. Here the
 * remaining time is idemq's lease, so both give a crashed consumer's message back after 40 s.
 */
function consumerContext(): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'idemq-bench',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:local:000000000000:function:idemq-bench',
    memoryLimitInMB: '1024',
    awsRequestId: 'idemq-bench',
    logGroupName: 'idemq-bench',
    logStreamName: 'idemq-bench',
    getRemainingTimeInMillis: () => RETENTION.leaseMs,
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}

/**
 * `@aws-lambda-powertools/idempotency` 2.35.0 with its Redis persistence layer
 * (`CachePersistenceLayer` from `/cache`, a connected `@redis/client`), wired as its docs show:
 * `makeIdempotent(fn, { persistenceStore, config })`, the key taken from the event with
 * `eventKeyJmesPath: 'requestId'`, records kept 24 h like the other contenders.
 *
 * Per processed message: `SET key {INPROGRESS} EX NX`, handler, `SET key {COMPLETED} EX`.
 * Per duplicate: the `SET NX` that fails, then `GET key` to read the record.
 */
export async function powertoolsContender(setup: ContenderSetup): Promise<RedisContender> {
  const sent = new CommandCounter();
  const client = countNodeRedis(await createClient({ url: setup.redisUrl }).connect(), sent);
  const persistenceStore = new CachePersistenceLayer({ client });
  const config = new IdempotencyConfig({
    eventKeyJmesPath: 'requestId',
    expiresAfterSeconds: RETENTION.completedTtlMs / 1000,
  });
  config.registerLambdaContext(consumerContext());
  const keyPrefix = `${setup.namespace}:powertools`;
  const processOnce = makeIdempotent(
    async (event: PowertoolsEvent) => {
      setup.handler();
      event.handled = true;
    },
    { persistenceStore, config, keyPrefix },
  );

  return {
    store: 'redis',
    sent,
    keyPatterns: [`${globEscape(keyPrefix)}#*`],
    async handle(message) {
      const event: PowertoolsEvent = { requestId: message.requestId, body: message.body };
      try {
        await processOnce(event);
      } catch (error) {
        if (error instanceof Error && error.name === 'IdempotencyAlreadyInProgressError') {
          return 'in-progress';
        }
        throw error;
      }
      return event.handled ? 'processed' : 'duplicate';
    },
    async close() {
      client.destroy();
    },
  };
}
