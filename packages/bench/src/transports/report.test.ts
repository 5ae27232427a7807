import { describe, expect, it } from 'vitest';
import { parseTransportsCli } from './cli.js';
import { type ConsumerRow, evaluateTransportGoals, type TransportReport } from './rabbitmq.js';
import {
  spliceTransportDocument,
  TRANSPORT_DOC_BEGIN,
  TRANSPORT_DOC_END,
  transportMarkdown,
} from './report.js';

const row = (
  consumer: ConsumerRow['consumer'],
  prefetch: number,
  messagesPerSecond: number,
  extra: Partial<ConsumerRow> = {},
): ConsumerRow => ({
  consumer,
  label: consumer,
  prefetch,
  messages: 20_000,
  messagesPerSecond,
  cpuMicrosPerMessage: 50,
  cpuShare: 0.2,
  peakRssBytes: 80 * 2 ** 20,
  rounds: [],
  anomalies: [],
  ...(consumer === 'idemq'
    ? {
        scriptCallsPerMessage: 0.2,
        roundTripsPerMessage: 0.2,
        commandsPerMessage: { evalsha: 0.2 },
      }
    : {}),
  ...extra,
});

describe('parseTransportsCli', () => {
  it('has the issue defaults and a quick mode', () => {
    const defaults = parseTransportsCli([]);
    const quick = parseTransportsCli(['rabbitmq', '--quick']);
    if (defaults === 'help' || quick === 'help') throw new Error('unexpected help');
    expect(defaults.transport).toBe('rabbitmq');
    expect([defaults.messages, defaults.runs, defaults.prefetch, defaults.queueType]).toEqual([
      20_000,
      3,
      [64, 1],
      'quorum',
    ]);
    expect([quick.messages, quick.sequentialMessages, quick.runs]).toEqual([1_000, 200, 1]);
    expect(parseTransportsCli(['--help'])).toBe('help');
  });

  it('reports every problem at once', () => {
    expect(() => parseTransportsCli(['kafka', '--runs', '0', '--queue-type', 'stream'])).toThrow(
      /unknown transport "kafka"[\s\S]*--runs[\s\S]*--queue-type/,
    );
  });
});

describe('goals and report', () => {
  const rows = [
    row('raw', 64, 5_000),
    row('idemq', 64, 4_100, { vsRaw: 0.82 }),
    row('raw', 1, 600, { messages: 2_000 }),
    row('idemq', 1, 300, { messages: 2_000, vsRaw: 0.5, roundTripsPerMessage: 2 }),
  ];

  it('judges the ratio at prefetch > 1 only, and the round trips everywhere', () => {
    const goals = evaluateTransportGoals(rows);
    expect(goals.map((g) => [g.name, g.actual, g.met])).toEqual([
      ['idemq msg/s vs raw amqplib, prefetch 64', '0.82×', true],
      ['idemq Redis round trips per message (store.stats())', '2.000', true],
      ['every message consumed exactly once, queues drained', 'yes', true],
    ]);
    const failed = evaluateTransportGoals([
      row('idemq', 64, 1, { vsRaw: 0.3, anomalies: ['run 1: 999/1000 messages acked'] }),
    ]);
    expect(failed.map((g) => g.met)).toEqual([false, true, false]);
  });

  it('renders Markdown into its own block of the document only', () => {
    const report: TransportReport = {
      transport: 'rabbitmq',
      startedAt: '2026-01-01T00:00:00.000Z',
      options: {
        messages: 20_000,
        sequentialMessages: 2_000,
        runs: 3,
        prefetch: [64, 1],
        queueType: 'quorum',
        warmupMessages: 1_000,
        isolation: 'process',
        stallTimeoutMs: 60_000,
        amqpUrl: 'amqp://***@127.0.0.1:5672',
        redisUrl: 'redis://127.0.0.1:6379',
      },
      machine: {
        cpus: 2,
        cpuModel: 'cpu',
        memoryGiB: 4,
        node: 'v20',
        os: 'Linux',
        rabbitmq: '3.10.8',
        redis: '7.0.15 (standalone)',
        loadAverage: [1, 2],
      },
      rows,
      goals: evaluateTransportGoals(rows),
      leftovers: [],
      durationMs: 1_000,
    };
    const markdown = transportMarkdown(report, 'pnpm bench transports');
    expect(markdown).toContain('20000 messages at prefetch 64, 2000 messages at prefetch 1');
    expect(markdown).toContain('| 0.82× |');
    const other = '<!-- bench:begin (written by `pnpm bench --doc`; do not edit by hand) -->';
    const document = `# t\n\n${other}\nkept\n<!-- bench:end -->\n\n${TRANSPORT_DOC_BEGIN}\nold\n${TRANSPORT_DOC_END}\n`;
    const spliced = spliceTransportDocument(document, markdown);
    expect(spliced).toContain(`${other}\nkept\n<!-- bench:end -->`);
    expect(spliced).not.toContain('\nold\n');
    expect(spliced).toContain(markdown);
    expect(() => spliceTransportDocument('# no markers', markdown)).toThrow(/no <!--/);
  });
});
