import { randomUUID } from 'node:crypto';
import { ErrorCodes, IdemqError, type Logger, StoreUnavailableError } from '@idemq/core';
import { decodeClaim } from './codec.js';
import { withTimeout } from './errors.js';
import type { RedisClient, ScriptRunner } from './scriptRunner.js';

/** Oldest Redis the scripts are written for (HSET with many fields, PEXPIRE, TIME in scripts). */
export const MIN_REDIS_VERSION = '6.0.0';

export interface SelfTestReport {
  redisVersion: string;
  cluster: boolean;
  /** Expiry the server gave a probe record claimed with a 5 s lease and 1 s retention. */
  probeTtlMs: number;
}

interface SelfTestContext {
  client: RedisClient;
  runner: ScriptRunner;
  prefix: string;
  timeoutMs: number;
  logger: Logger;
}

/** Error for a server the store cannot run on. */
export class UnsupportedServerError extends IdemqError {
  constructor(message: string) {
    super(ErrorCodes.STORE_UNSUPPORTED, message, { retriable: false });
  }
}

/**
 * Proves on this server that the scripts load, that a claim's record gets an expiry from the
 * server's clock, and that fencing refuses a stranger's token. Leaves nothing behind.
 */
export async function runSelfTest(context: SelfTestContext): Promise<SelfTestReport> {
  const { client, runner, prefix, timeoutMs } = context;
  const cluster = 'nodes' in client;
  const step = <T>(name: string, work: () => Promise<T>) =>
    withTimeout(work(), timeoutMs, `self-test ${name}`);

  await step('connect', () => connected(client));
  const info = await step('INFO', async () => {
    const node = cluster ? client.nodes('master')[0] : client;
    if (!node)
      throw new StoreUnavailableError('Redis Cluster has no reachable master', {
        reason: 'unreachable',
      });
    return node.info('server');
  });
  const redisVersion = /redis_version:([\d.]+)/.exec(info)?.[1] ?? 'unknown';
  if (compareVersions(redisVersion, MIN_REDIS_VERSION) < 0) {
    throw new UnsupportedServerError(
      `Redis ${redisVersion} is not supported: idemq needs ${MIN_REDIS_VERSION} or newer`,
    );
  }
  await step('SCRIPT LOAD', () => runner.loadAll());

  const key = `${prefix}:{self-test-${randomUUID()}}`;
  try {
    const token = randomUUID();
    const [reply] = (await step('claim', () =>
      runner.run('claim', [key], [5_000, 1_000, 6_000, '0', token, '']),
    )) as unknown[];
    const claim = decodeProbeClaim(reply, token);
    if (claim.status !== 'claimed' || claim.attempt !== 1)
      throw new UnsupportedServerError(`probe claim answered ${JSON.stringify(claim)}`);
    const pttl = Number(await step('PTTL', () => client.pttl(key)));
    if (!(pttl > 0 && pttl <= 6_000)) {
      throw new UnsupportedServerError(`probe record expiry is ${pttl} ms, expected about 6000`);
    }
    const stranger = (await step('fenced complete', () =>
      runner.run('complete', [key], [1_000, '0', 'not-the-owner']),
    )) as unknown[];
    if (Number(stranger[0]) !== 0)
      throw new UnsupportedServerError('fencing did not refuse a stranger token');
    return { redisVersion, cluster, probeTtlMs: pttl };
  } finally {
    await client.del(key).catch(() => undefined);
  }
}

function decodeProbeClaim(reply: unknown, token: string) {
  try {
    return decodeClaim(reply, token, 5_000);
  } catch (error) {
    throw new UnsupportedServerError(`probe claim: ${(error as Error).message}`);
  }
}

/** Resolves once the client (a Cluster: its slot map) is ready to take commands. */
function connected(client: RedisClient): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => client.once('ready', () => resolve()));
}

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const diff = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}
