import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serviceUrls } from '@idemq/services';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';

const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const redis = new Redis(serviceUrls().redis);
afterAll(() => redis.quit());

async function ledgerKeys(): Promise<Set<string>> {
  const keys = new Set<string>();
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', 'idemq-chaos:*', 'COUNT', 1000);
    cursor = next;
    for (const key of batch) keys.add(key);
  } while (cursor !== '0');
  return keys;
}

describe('pnpm chaos, interrupted', () => {
  it('Ctrl-C stops the run, removes its ledger keys, writes no figures and exits 130', async () => {
    const before = await ledgerKeys();
    const out = join(mkdtempSync(join(tmpdir(), 'idemq-chaos-')), 'figures.json');
    const child = spawn(
      process.execPath,
      [cli, '--transport', 'memory', '--scenario', 'soak', '--messages', '200000', '--out', out],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    let sawKeys = false;
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    await new Promise<void>((resolve, reject) => {
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('consumers up')) resolve();
      });
      void exited.then(() => reject(new Error(`exited before starting:\n${stderr}`)));
    });
    // The run is under way: its ledger exists.
    for (let i = 0; i < 40 && !sawKeys; i++) {
      const now = await ledgerKeys();
      sawKeys = [...now].some((key) => !before.has(key));
      if (!sawKeys) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(sawKeys, 'the run wrote its ledger').toBe(true);

    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stderr).toContain('interrupted: cleaned up');
    expect(existsSync(out)).toBe(false);
    const left = [...(await ledgerKeys())].filter((key) => !before.has(key));
    expect(left).toEqual([]);
  });
});
