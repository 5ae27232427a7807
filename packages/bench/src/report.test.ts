import { describe, expect, it } from 'vitest';
import { parseCli } from './args.js';
import { type BenchReport, evaluateGoals, type Row } from './bench.js';
import { DOC_BEGIN, DOC_END, spliceDocument, toMarkdown } from './report.js';
import { median, quantile } from './stats.js';
import { makeWorkload } from './workload.js';

const row = (
  contender: Row['contender'],
  concurrency: number,
  messagesPerSecond: number,
  extra: Partial<Row> = {},
): Row => ({
  contender,
  label: contender,
  role: contender.startsWith('idemq')
    ? 'idemq'
    : contender === 'baseline'
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
    ]);
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
    expect(goals.map((g) => [g.name, g.actual, g.met])).toEqual([
      ['idemq round trips per processed message', '2.000', true],
      ['idemq round trips per duplicate', '1.000', true],
      ['idemq msg/s at concurrency 1 vs hand-written fenced Lua', '0.94×', true],
      ['idemq msg/s at concurrency 64 vs best peer (mqt)', '2.57×', false],
      ['idemq msg/s at concurrency 64 vs hand-written SET NX baseline', '1.60×', true],
      ['idemq Redis bytes per COMPLETED record (fingerprinted, no result)', '216', false],
    ]);
  });
});

describe('docs/performance.md block', () => {
  it('replaces only what lies between the markers', () => {
    const doc = `# Perf\n\nprose\n\n${DOC_BEGIN}\nold table\n${DOC_END}\n\nmore prose\n`;
    const out = spliceDocument(doc, 'new table');
    expect(out).toBe(`# Perf\n\nprose\n\n${DOC_BEGIN}\n\nnew table\n\n${DOC_END}\n\nmore prose\n`);
    expect(spliceDocument(out, 'new table')).toBe(out);
    expect(() => spliceDocument('# no markers', 'x')).toThrow(/bench:begin/);
  });

  it('renders the table, the ceiling and the goals as Markdown', () => {
    const report: BenchReport = {
      startedAt: '2026-01-01T00:00:00.000Z',
      options: {
        redisUrl: 'redis://127.0.0.1:6379',
        ids: 20_000,
        runs: 5,
        concurrency: [1],
        contenders: ['idemq', 'baseline'],
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
      ],
      goals: [{ name: 'g', target: '≥ 1', actual: '0.5', met: false }],
      durationMs: 1000,
    };
    const markdown = toMarkdown(report, 'pnpm bench');
    const cells = (line: string) =>
      line
        .split('|')
        .map((c) => c.trim())
        .filter(Boolean);
    const lines = markdown
      .split('\n')
      .filter((l) => l.startsWith('|'))
      .map(cells);
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
    // Laid out as Biome formats tables: padded columns, numbers right-aligned.
    expect(markdown).toContain('| clients | SET/s | GET/s | SET p50 ms | GET p50 ms |');
    expect(markdown).toContain('| ------- | ----: | ----: | ---------: | ---------: |');
    expect(markdown).toContain('| 1       | 10000 | 11000 |      0.050 |      0.050 |');
  });
});
