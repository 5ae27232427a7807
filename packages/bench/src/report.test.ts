import { describe, expect, it } from 'vitest';
import { parseCli } from './args.js';
import { type BenchReport, evaluateGoals, type Row } from './bench.js';
import { STORE } from './contenders/index.js';
import {
  DOC_BEGIN,
  DOC_END,
  POSTGRES_DOC_BEGIN,
  POSTGRES_DOC_END,
  spliceDocument,
  toMarkdown,
  toText,
} from './report.js';
import { median, quantile } from './stats.js';
import { makeWorkload } from './workload.js';

const row = (
  contender: Row['contender'],
  concurrency: number,
  messagesPerSecond: number,
  extra: Partial<Row> = {},
): Row => ({
  contender,
  store: STORE[contender],
  label: contender,
  role: contender.startsWith('idemq')
    ? 'idemq'
    : contender.endsWith('baseline')
      ? 'baseline'
      : contender === 'fenced-lua'
        ? 'floor'
        : 'peer',
  concurrency,
  messagesPerSecond,
  roundTripsPerProcessed: 2,
  roundTripsPerDuplicate: 1,
  serverCommandsPerProcessed: 2,
  serverCommandsPerDuplicate: 1,
  commandsPerProcessed: { set: 2 },
  commandsPerDuplicate: { set: 1 },
  p50Ms: 0.1,
  p99Ms: 1,
  cpuMicrosPerMessage: 50,
  serverCpuMicrosPerMessage: 20,
  bytesPerRecord: 190,
  peakRssBytes: 100 * 2 ** 20,
  rounds: [],
  anomalies: [],
  noise: [],
  ...extra,
});

describe('parseCli', () => {
  it('has the issue defaults and a quick mode', () => {
    const defaults = parseCli([]);
    const quick = parseCli(['--quick']);
    if (defaults === 'help' || quick === 'help') throw new Error('unexpected help');
    expect([defaults.ids, defaults.runs, defaults.concurrency]).toEqual([20_000, 5, [1, 64]]);
    expect(defaults.contenders).toEqual([
      'idemq',
      'idemq-cache',
      'powertools',
      'mqt',
      'fenced-lua',
      'baseline',
      'idemq-postgres',
      'postgres-baseline',
    ]);
    // The default run takes PostgreSQL only when it answers.
    expect(defaults.optionalStores).toEqual(['postgres']);
    expect([quick.ids, quick.runs]).toEqual([2_000, 1]);
    expect(defaults.pin).toBe(true);
    const unpinned = parseCli(['--no-pin']);
    expect(unpinned !== 'help' && unpinned.pin).toBe(false);
  });

  it('keeps table order for --only and reports every bad option at once', () => {
    const some = parseCli(['--only', 'baseline,idemq', '--concurrency', '8']);
    if (some === 'help') throw new Error('unexpected help');
    expect(some.contenders).toEqual(['idemq', 'baseline']);
    expect(some.concurrency).toEqual([8]);
    expect(() => parseCli(['--ids', '0', '--only', 'nobody'])).toThrow(/--ids[\s\S]*nobody/);
  });

  it('runs only the PostgreSQL rows with --stores postgres, and then needs the server', () => {
    const postgres = parseCli(['--stores', 'postgres']);
    if (postgres === 'help') throw new Error('unexpected help');
    expect(postgres.contenders).toEqual(['idemq-postgres', 'postgres-baseline']);
    expect(postgres.optionalStores).toEqual([]);
    const named = parseCli(['--only', 'idemq-postgres']);
    expect(named !== 'help' && named.optionalStores).toEqual([]);
    expect(() => parseCli(['--stores', 'mysql'])).toThrow(/--stores: unknown store "mysql"/);
    expect(() => parseCli(['--only', 'idemq', '--stores', 'postgres'])).toThrow(/no contender/);
  });
});

describe('figures', () => {
  it('takes nearest-rank quantiles and medians', () => {
    expect(quantile([5, 1, 4, 2, 3], 0.5)).toBe(3);
    expect(
      quantile(
        Array.from({ length: 100 }, (_, i) => i + 1),
        0.99,
      ),
    ).toBe(99);
    expect(median([3, 1, 2, 10])).toBe(2.5);
  });

  it('mixes a fifth of the ids in again, each well after its original, as new message objects', () => {
    const { stream, duplicateCount, duplicates } = makeWorkload('ns', 5_000);
    expect(stream).toHaveLength(6_000);
    expect(duplicateCount).toBe(1_000);
    expect(duplicates).toHaveLength(1_000);
    const positions = new Map<string, number>();
    stream.forEach((message, at) => {
      if (message.originalAt === undefined) {
        positions.set(message.requestId, at);
        return;
      }
      const original = stream[message.originalAt];
      expect(original?.requestId).toBe(message.requestId);
      expect(original).not.toBe(message);
      expect(original?.body).toBe(message.body);
      expect(at - message.originalAt).toBeGreaterThanOrEqual(1_000);
    });
    expect(positions.size).toBe(5_000);
    // A small workload puts the duplicates after the last original.
    const small = makeWorkload('ns', 20);
    const ids = (messages: { requestId: string }[]) => messages.map((m) => m.requestId);
    expect(ids(small.stream.slice(20))).toEqual(['ns:0', 'ns:5', 'ns:10', 'ns:15']);
    // The duplicates sent again alone are of other ids.
    expect(ids(small.duplicates)).toEqual(['ns:1', 'ns:6', 'ns:11', 'ns:16']);
  });

  it('judges the PostgreSQL goals against its own baseline, apart from the Redis ones', () => {
    const goals = evaluateGoals([
      row('idemq', 64, 9000, { vsBaseline: 1.6 }),
      row('baseline', 64, 5600),
      row('idemq-postgres', 1, 900, { vsBaseline: 0.9 }),
      row('postgres-baseline', 1, 1000),
      row('idemq-postgres', 64, 3000, { vsBaseline: 0.6, roundTripsPerProcessed: 2 }),
      row('postgres-baseline', 64, 5000),
    ]);
    expect(
      goals.filter((g) => g.store === 'postgres').map((g) => [g.name, g.actual, g.met]),
    ).toEqual([
      ['idemq round trips per processed message (store.stats())', '2.000', true],
      [
        'idemq msg/s at concurrency 64 vs hand-written INSERT … ON CONFLICT DO NOTHING',
        '0.60×',
        false,
      ],
    ]);
    // The Redis goals see the Redis rows only.
    expect(goals.filter((g) => g.store === 'redis').map((g) => g.name)).toContain(
      'idemq msg/s at concurrency 64 vs hand-written SET NX baseline',
    );
    const over = evaluateGoals([row('idemq-postgres', 64, 1, { roundTripsPerProcessed: 2.5 })]);
    expect(over.map((g) => [g.actual, g.met])).toEqual([['2.500', false]]);
  });

  it('judges the goals against the fenced floor, the baseline and the best peer of the same run', () => {
    const goals = evaluateGoals([
      row('idemq', 1, 850, { vsBaseline: 0.85 }),
      row('fenced-lua', 1, 900),
      row('baseline', 1, 1000),
      row('idemq', 64, 9000, { vsBaseline: 1.6, bytesPerRecord: 216 }),
      row('powertools', 64, 2000),
      row('mqt', 64, 3500),
      row('baseline', 64, 5600),
    ]);
    expect(goals.map((g) => [g.store, g.name, g.actual, g.met])).toEqual([
      ['redis', 'idemq round trips per processed message', '2.000', true],
      ['redis', 'idemq round trips per duplicate', '1.000', true],
      ['redis', 'idemq msg/s at concurrency 1 vs hand-written fenced Lua', '0.94×', true],
      ['redis', 'idemq msg/s at concurrency 64 vs best peer (mqt)', '2.57×', false],
      ['redis', 'idemq msg/s at concurrency 64 vs hand-written SET NX baseline', '1.60×', true],
      ['redis', 'idemq Redis bytes per COMPLETED record (fingerprinted, no result)', '216', false],
    ]);
  });
});

describe('docs/performance.md blocks', () => {
  const pgBlock = `${POSTGRES_DOC_BEGIN}\nold pg\n${POSTGRES_DOC_END}`;

  it('replaces only what lies between the markers of each store', () => {
    const doc = `# Perf\n\nprose\n\n${DOC_BEGIN}\nold table\n${DOC_END}\n\nmore prose\n\n${pgBlock}\n`;
    const out = spliceDocument(doc, { redis: 'new table' });
    expect(out).toBe(
      `# Perf\n\nprose\n\n${DOC_BEGIN}\n\nnew table\n\n${DOC_END}\n\nmore prose\n\n${pgBlock}\n`,
    );
    expect(spliceDocument(out, { redis: 'new table' })).toBe(out);
    // A PostgreSQL-only run leaves the Redis block as it was.
    const pgOnly = spliceDocument(out, { postgres: 'pg table' });
    expect(pgOnly).toContain(`${DOC_BEGIN}\n\nnew table\n\n${DOC_END}`);
    expect(pgOnly).toContain(`${POSTGRES_DOC_BEGIN}\n\npg table\n\n${POSTGRES_DOC_END}`);
    expect(() => spliceDocument('# no markers', { redis: 'x' })).toThrow(/bench:begin/);
    expect(() => spliceDocument(`${DOC_BEGIN}\n${DOC_END}`, { postgres: 'x' })).toThrow(
      /bench-postgres:begin/,
    );
  });

  const report: BenchReport = {
    startedAt: '2026-01-01T00:00:00.000Z',
    options: {
      redisUrl: 'redis://127.0.0.1:6379',
      postgresUrl: 'postgres://postgres@127.0.0.1:5432/postgres',
      postgresPoolSize: 16,
      ids: 20_000,
      runs: 5,
      concurrency: [1],
      contenders: ['idemq', 'baseline', 'idemq-postgres', 'postgres-baseline'],
      isolation: 'process',
      warmupIds: 2_000,
      ceiling: true,
    },
    machine: {
      cpus: 2,
      cpuModel: 'cpu',
      memoryGiB: 24,
      node: 'v20',
      os: 'Linux',
      redis: '7.0.15 (standalone)',
      postgres: '15.20',
      pinning:
        'Redis and PostgreSQL pinned to CPU 0, the bench and its contenders to CPU 1 (taskset)',
      loadAverage: [0.5, 0.6],
    },
    ceilings: [
      {
        clients: 1,
        setPerSecond: 10_000,
        getPerSecond: 11_000,
        setP50Ms: 0.05,
        getP50Ms: 0.05,
        command: 'redis-benchmark -q -n 100000 -c 1 -P 1 <SET|GET> k',
      },
    ],
    rows: [
      row('idemq', 1, 900, { vsBaseline: 0.9 }),
      row('baseline', 1, 1000, { vsBaseline: 1 }),
      row('idemq-postgres', 1, 700, {
        vsBaseline: 0.7,
        commandsPerProcessed: { 'with…insert': 1, update: 1 },
        commandsPerDuplicate: { 'with…insert': 1 },
        serverCommandsPerProcessed: Number.NaN,
        serverCpuMicrosPerMessage: 80,
        bytesPerRecord: 420,
      }),
      row('postgres-baseline', 1, 1000, { vsBaseline: 1 }),
    ],
    goals: [
      { store: 'redis', name: 'g', target: '≥ 1', actual: '0.5', met: false },
      { store: 'postgres', name: 'pg goal', target: '≤ 2', actual: '2.000', met: true },
    ],
    skipped: [],
    durationMs: 1000,
  };
  const cells = (line: string) =>
    line
      .split('|')
      .map((c) => c.trim())
      .filter(Boolean);
  const tableLines = (markdown: string) =>
    markdown
      .split('\n')
      .filter((l) => l.startsWith('|'))
      .map(cells);

  it('renders the Redis table, the ceiling and the goals as Markdown', () => {
    const markdown = toMarkdown(report, 'pnpm bench').redis ?? '';
    const lines = tableLines(markdown);
    expect(lines).toContainEqual([
      'idemq',
      '1',
      '900',
      '0.90×',
      '2.000',
      '1.000',
      '2.00',
      '1.00',
      '0.100',
      '1.000',
      '50',
      '20',
      '190',
      '100',
    ]);
    expect(lines).toContainEqual(['1', '10000', '11000', '0.050', '0.050']);
    expect(lines).toContainEqual(['g', '≥ 1', '0.5', '**no**']);
    expect(lines).toContainEqual(['idemq', 'SET ×2.00', 'SET ×1.00']);
    // Its own rows and goals only.
    expect(markdown).not.toContain('idemq-postgres');
    expect(markdown).not.toContain('pg goal');
    // Laid out as Biome formats tables: padded columns, numbers right-aligned.
    expect(markdown).toContain('| clients | SET/s | GET/s | SET p50 ms | GET p50 ms |');
    expect(markdown).toContain('| ------- | ----: | ----: | ---------: | ---------: |');
    expect(markdown).toContain('| 1       | 10000 | 11000 |      0.050 |      0.050 |');
  });

  it('renders the PostgreSQL block: its rows, statements, pool, server and goals', () => {
    const markdown = toMarkdown(report, 'pnpm bench --stores postgres').postgres ?? '';
    const lines = tableLines(markdown);
    expect(lines).toContainEqual([
      'idemq-postgres',
      '1',
      '700',
      '0.70×',
      '2.000',
      '1.000',
      '0.100',
      '1.000',
      '50',
      '80',
      '420',
      '100',
    ]);
    expect(lines).toContainEqual([
      'idemq-postgres',
      'UPDATE ×1.00, WITH…INSERT ×1.00',
      'WITH…INSERT ×1.00',
    ]);
    expect(lines).toContainEqual(['pg goal', '≤ 2', '2.000', 'yes']);
    expect(markdown).toContain('a pg Pool of 16 connections');
    expect(markdown).toContain('PostgreSQL 15.20 at postgres://postgres@127.0.0.1:5432/postgres');
    expect(markdown).toContain('PostgreSQL pinned to CPU 0');
    expect(markdown).not.toContain('Redis cmds');
    expect(markdown).not.toContain('| g ');
  });

  it('says in the terminal report which rows were skipped and why', () => {
    const skipped: BenchReport = {
      ...report,
      rows: report.rows.filter((r) => r.store === 'redis'),
      skipped: [
        'PostgreSQL rows skipped: PostgreSQL at postgres://… did not answer (ECONNREFUSED).',
      ],
    };
    const text = toText(skipped, 'pnpm bench');
    expect(text).toContain('PostgreSQL rows skipped');
    expect(text).not.toContain('PostgreSQL CPU');
    expect(Object.keys(toMarkdown(skipped, 'pnpm bench'))).toEqual(['redis']);
  });
});
