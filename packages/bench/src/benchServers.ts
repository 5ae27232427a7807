import { Redis } from 'ioredis';
import type pg from 'pg';
import type { BenchOptions } from './bench.js';
import { type ContenderName, STORE, type StoreName } from './contenders/index.js';
import { redactUrl } from './machine.js';
import { isLoopbackUrl, type PinnableServer } from './pinning.js';
import { connectPostgres, postgresFacts } from './postgresInfo.js';
import { postgresPids } from './postgresProcesses.js';
import { serverFacts } from './redisInfo.js';
import { removeRunData } from './runData.js';

/** The servers of one bench run, opened once by the parent process. */
export interface BenchServers {
  /** The contenders to run: those asked for whose server answered, in table order. */
  contenders: ContenderName[];
  /** For the report: `7.0.15 (standalone)`, `15.20 (Debian …)`. */
  versions: Partial<Record<StoreName, string>>;
  /** Why contenders that were asked for were left out. */
  skipped: string[];
  /** What `pinCores` may pin. */
  pinnable: PinnableServer[];
  /** Deletes what a run under `namespace` left on every server. Never rejects. */
  removeRunData(namespace: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Connects to the server of every contender asked for and reads its facts. A server that does not
 * answer fails the run, unless its store is in `optionalStores`: then its contenders are left out
 * and `skipped` says so (the default `pnpm bench` with no PostgreSQL running).
 */
export async function openServers(
  options: Pick<BenchOptions, 'redisUrl' | 'postgresUrl' | 'contenders' | 'optionalStores'>,
  log: (line: string) => void,
): Promise<BenchServers> {
  const wanted = new Set(options.contenders.map((contender) => STORE[contender]));
  const opened: { redis?: Redis; postgres?: pg.Client } = {};
  const closeAll = async () => {
    await opened.redis?.quit().catch(() => opened.redis?.disconnect());
    await opened.postgres?.end().catch(() => undefined);
  };
  const versions: Partial<Record<StoreName, string>> = {};
  const skipped: string[] = [];
  const pinnable: PinnableServer[] = [];
  try {
    if (wanted.has('redis')) {
      opened.redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true });
      await opened.redis.connect();
      const server = await serverFacts(opened.redis);
      versions.redis = `${server.version} (${server.mode})`;
      const { pid } = server;
      pinnable.push({
        name: 'Redis',
        local: isLoopbackUrl(options.redisUrl),
        pids: pid === undefined ? undefined : () => [pid],
      });
    }
    if (wanted.has('postgres')) {
      try {
        opened.postgres = await connectPostgres(options.postgresUrl);
      } catch (error) {
        const why = `PostgreSQL at ${redactUrl(options.postgresUrl)} did not answer (${describe(error)})`;
        if (!options.optionalStores?.includes('postgres')) {
          throw new Error(`${why}: set POSTGRES_URL, or start it with pnpm services:up postgres`);
        }
        skipped.push(
          `PostgreSQL rows skipped: ${why}. Set POSTGRES_URL, or start it with pnpm services:up postgres.`,
        );
        log(skipped.at(-1) as string);
        wanted.delete('postgres');
      }
    }
    if (opened.postgres) {
      const { version, postmaster } = await postgresFacts(opened.postgres);
      versions.postgres = version;
      pinnable.push({
        name: 'PostgreSQL',
        // Its postmaster was found among this machine's processes.
        local: postmaster !== undefined,
        pids: postmaster === undefined ? undefined : () => postgresPids(postmaster),
      });
    }
  } catch (error) {
    await closeAll();
    throw error;
  }
  return {
    contenders: options.contenders.filter((contender) => wanted.has(STORE[contender])),
    versions,
    skipped,
    pinnable,
    removeRunData: (namespace) => removeRunData(opened, namespace),
    close: closeAll,
  };
}

/** An error in a few words (a refused connection to several addresses has an empty message). */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return error.message || (typeof code === 'string' ? code : error.name);
}
