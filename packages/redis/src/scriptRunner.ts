import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { type ScriptName, Scripts } from './scripts.js';

export type RedisClient = Redis | Cluster;

const SHAS = Object.fromEntries(
  Object.entries(Scripts).map(([name, lua]) => [
    name,
    createHash('sha1').update(lua).digest('hex'),
  ]),
) as Record<ScriptName, string>;

/**
 * Runs the record scripts with EVALSHA. A server that does not know a script yet (first use,
 * restart, SCRIPT FLUSH, a new Cluster node) answers NOSCRIPT; the call is then repeated with
 * EVAL, which also loads it, so later calls are EVALSHA again.
 */
export class ScriptRunner {
  /** Script calls sent, EVAL retries included: the store's round trips. */
  calls = 0;

  constructor(private readonly client: RedisClient) {}

  async run(name: ScriptName, keys: readonly string[], args: readonly (string | number)[]) {
    this.calls += 1;
    try {
      return await this.client.evalsha(SHAS[name], keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      this.calls += 1;
      return await this.client.eval(Scripts[name], keys.length, ...keys, ...args);
    }
  }

  /** Loads every script on every master (used by the self-test). */
  async loadAll(): Promise<void> {
    const nodes = 'nodes' in this.client ? this.client.nodes('master') : [this.client];
    for (const node of nodes) {
      for (const [name, lua] of Object.entries(Scripts)) {
        const sha = await node.script('LOAD', lua);
        if (sha !== SHAS[name as ScriptName])
          throw new Error(`script ${name} loaded as ${String(sha)}`);
      }
    }
  }
}
