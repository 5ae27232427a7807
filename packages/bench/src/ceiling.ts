import { execFile } from 'node:child_process';
import { track } from './children.js';

/** Runs a program to completion; its output, or the error it failed with. */
function run(file: string, args: string[], timeoutMs: number): Promise<{ stdout: string }> {
  return new Promise((resolve, reject) => {
    track(
      execFile(file, args, { timeout: timeoutMs }, (error, stdout) => {
        if (error) reject(error);
        else resolve({ stdout });
      }),
    );
  });
}

export interface CeilingResult {
  clients: number;
  /** Commands per second `redis-benchmark` got from the server, by command. */
  setPerSecond: number;
  getPerSecond: number;
  setP50Ms: number;
  getP50Ms: number;
  /** The exact command line used. */
  command: string;
}

/**
 * The server's own ceiling on this machine: `redis-benchmark -q -n <requests> -c <clients> -P 1`
 * for SET and GET. It runs them as explicit commands on a key under our namespace instead of
 * `-t set,get` (which writes `key:__rand_int__`), so the key it leaves can be deleted without
 * touching anything else on a shared server. Same commands, same 3-byte value, one request in
 * flight per connection. Resolves undefined when `redis-benchmark` is not installed.
 */
export async function measureCeiling(
  redisUrl: string,
  clients: number,
  key: string,
  requests = 100_000,
): Promise<CeilingResult | undefined> {
  const url = new URL(redisUrl);
  const connection = ['-h', url.hostname || '127.0.0.1', '-p', url.port || '6379'];
  if (url.password) connection.push('-a', decodeURIComponent(url.password));
  if (url.username && url.username !== 'default')
    connection.push('--user', decodeURIComponent(url.username));
  const db = url.pathname.replace('/', '');
  if (db) connection.push('--dbnum', db);
  const common = [...connection, '-q', '-n', String(requests), '-c', String(clients), '-P', '1'];
  try {
    const set = await bench([...common, 'SET', key, 'xxx']);
    const get = await bench([...common, 'GET', key]);
    const shown = [...common, '<SET|GET>', key].map((arg) => (arg === url.password ? '***' : arg));
    return {
      clients,
      setPerSecond: set.perSecond,
      getPerSecond: get.perSecond,
      setP50Ms: set.p50Ms,
      getP50Ms: get.p50Ms,
      command: `redis-benchmark ${shown.join(' ')}`,
    };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

async function bench(args: string[]): Promise<{ perSecond: number; p50Ms: number }> {
  const { stdout } = await run('redis-benchmark', args, 300_000);
  // "SET key: 98039.22 requests per second, p50=0.287 msec" (the last report on the line).
  const text = stdout.split('\r').at(-1) ?? stdout;
  const match = /([\d.]+) requests per second(?:, p50=([\d.]+) msec)?/.exec(text);
  if (!match) throw new Error(`unexpected redis-benchmark output: ${stdout.slice(-200)}`);
  return { perSecond: Number(match[1]), p50Ms: Number(match[2] ?? Number.NaN) };
}
