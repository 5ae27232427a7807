import { describe, expect, it } from 'vitest';
import { parseTransportsCli } from './cli.js';
import { spliceTransportDocument, transportMarkdown, transportMarkers } from './report.js';
import {
  type ConsumerRow,
  checkRound,
  evaluateTransportGoals,
  type TransportReport,
} from './run.js';
import { pollSizes } from './sqs/consumer.js';
import { type ConsumeResult, isIdemqConsumer, type TransportName } from './types.js';

const row = (
  consumer: ConsumerRow['consumer'],
  concurrency: number,
  messagesPerSecond: number,
  extra: Partial<ConsumerRow> = {},
): ConsumerRow => ({
  consumer,
  label: consumer,
  concurrency,
  messages: 20_000,
  messagesPerSecond,
  startMs: 12,
  cpuMicrosPerMessage: 50,
  cpuShare: 0.2,
  machineCpuMicrosPerMessage: 380,
  machineBusyShare: 0.97,
  peakRssBytes: 80 * 2 ** 20,
  rounds: [],
  anomalies: [],
  ...(isIdemqConsumer(consumer)
    ? {
        scriptCallsPerMessage: 0.2,
        roundTripsPerMessage: 0.2,
        commandsPerMessage: { evalsha: 0.2 },
      }
    : {}),
  ...extra,
});

describe('parseTransportsCli', () => {
  it('runs every transport by default, with the issue defaults and a quick mode', () => {
    const defaults = parseTransportsCli([]);
    const quick = parseTransportsCli(['sqs', 'kafka', '--quick']);
    if (defaults === 'help' || quick === 'help') throw new Error('unexpected help');
    expect(defaults.transports).toEqual(['rabbitmq', 'kafka', 'sqs']);
    expect(defaults.concurrency).toBeUndefined();
    const { messages, runs, settings } = defaults.common;
    expect([messages, runs, settings.queueType, settings.partitions]).toEqual([
      20_000,
      3,
      'quorum',
      6,
    ]);
    // Table order, whatever order the command line gave.
    expect(quick.transports).toEqual(['kafka', 'sqs']);
    expect([quick.common.messages, quick.common.sequentialMessages, quick.common.runs]).toEqual([
      1_000, 200, 1,
    ]);
    expect(parseTransportsCli(['--help'])).toBe('help');
    expect(defaults.common.consumers).toEqual(['raw', 'hand', 'idemq', 'batch']);
  });

  it('takes the consumers to compare, raw always among them', () => {
    const options = parseTransportsCli(['--consumers', 'claim, idemq,store,claim']);
    if (options === 'help') throw new Error('unexpected help');
    expect(options.common.consumers).toEqual(['raw', 'claim', 'idemq', 'store']);
    expect(() => parseTransportsCli(['--consumers', 'idemq,fast'])).toThrow(
      /unknown consumer "fast"/,
    );
  });

  it('takes --prefetch as --concurrency, for every transport given', () => {
    const options = parseTransportsCli(['rabbitmq', '--prefetch', '8,64']);
    if (options === 'help') throw new Error('unexpected help');
    expect(options.concurrency).toEqual([8, 64]);
  });

  it('reports every problem at once', () => {
    expect(() =>
      parseTransportsCli(['nats', '--runs', '0', '--queue-type', 'stream', '--partitions', 'x']),
    ).toThrow(/unknown transport "nats"[\s\S]*--runs[\s\S]*--queue-type[\s\S]*--partitions/);
    expect(() => parseTransportsCli(['--concurrency', '8', '--prefetch', '8'])).toThrow(
      /same option/,
    );
  });
});

describe('the raw SQS loop', () => {
  it('polls as the transport does: ⌈concurrency / 10⌉ receives, never more than concurrency', () => {
    expect(pollSizes(64)).toEqual([10, 10, 10, 10, 10, 10, 4]);
    expect(pollSizes(10)).toEqual([10]);
    expect(pollSizes(1)).toEqual([1]);
  });
});

describe('goals and report', () => {
  const rows = [
    row('raw', 64, 5_000),
    row('hand', 64, 4_600, {
      vsRaw: 0.92,
      roundTripsPerMessage: 2,
      redisCpuMicrosPerMessage: 7.4,
      commandsPerMessage: { set: 2 },
    }),
    row('idemq', 64, 4_100, { vsRaw: 0.82 }),
    row('raw', 1, 600, { messages: 2_000 }),
    row('idemq', 1, 300, { messages: 2_000, vsRaw: 0.5, roundTripsPerMessage: 2 }),
  ];

  it('judges idemq only: its ratio at concurrency > 1, and its round trips everywhere', () => {
    const goals = evaluateTransportGoals('rabbitmq', rows);
    expect(goals.map((g) => [g.name, g.actual, g.met])).toEqual([
      ['idemq at concurrency 64: msg/s vs raw', '0.82×', true],
      ['idemq Redis round trips per message (store.stats())', '2.000', true],
      ['every message consumed exactly once, nothing left', 'yes', true],
    ]);
    expect(evaluateTransportGoals('sqs', rows)[0]).toMatchObject({ target: '≥ 0.9×', met: false });
    const failed = evaluateTransportGoals('rabbitmq', [
      row('idemq', 64, 1, { vsRaw: 0.3, anomalies: ['run 1: 999/1000 messages acked'] }),
    ]);
    expect(failed.map((g) => g.met)).toEqual([false, true, false]);
  });

  it('on Kafka also judges the batch row against the hand-written consumer and by its CPU', () => {
    const goals = evaluateTransportGoals('kafka', [
      row('raw', 64, 10_000),
      row('hand', 64, 3_000, { vsRaw: 0.3 }),
      row('batch', 64, 5_000, { vsRaw: 0.5, cpuMicrosPerMessage: 31 }),
    ]);
    expect(goals.map((g) => [g.name, g.actual, g.met])).toEqual([
      ['batch at concurrency 64: msg/s vs raw', '0.50×', true],
      ['batch at concurrency 64: msg/s vs hand-written SET NX', '1.67×', true],
      ['batch at concurrency 64: consumer CPU µs / msg', '31', false],
      ['idemq Redis round trips per message (store.stats())', '0.200', true],
      ['every message consumed exactly once, nothing left', 'yes', true],
    ]);
  });

  const report = (transport: TransportName): TransportReport => ({
    transport,
    startedAt: '2026-01-01T00:00:00.000Z',
    options: {
      transport,
      endpoints: {
        redisUrl: 'redis://127.0.0.1:6379',
        amqpUrl: 'amqp://***@127.0.0.1:5672',
        kafkaBrokers: ['127.0.0.1:9092'],
        sqsEndpoint: 'http://127.0.0.1:9324',
        sqsRegion: 'us-east-1',
      },
      settings: { queueType: 'quorum', partitions: 6, sqsWaitTimeMs: 1_000 },
      messages: 20_000,
      sequentialMessages: 2_000,
      runs: 3,
      concurrency: [64, 1],
      consumers: ['raw', 'hand', 'idemq'],
      warmupMessages: 1_000,
      isolation: 'process',
      stallTimeoutMs: 60_000,
    },
    machine: {
      cpus: 2,
      cpuModel: 'cpu',
      memoryGiB: 4,
      node: 'v20',
      os: 'Linux',
      broker: 'RabbitMQ 3.10.8',
      redis: 'Redis 7.0.15 (standalone)',
      loadAverage: [1, 2],
    },
    rows,
    goals: evaluateTransportGoals(transport, rows),
    leftovers: [],
    durationMs: 1_000,
  });

  it('renders the same table for every transport', () => {
    for (const transport of ['rabbitmq', 'kafka', 'sqs'] as const) {
      const markdown = transportMarkdown(report(transport), 'pnpm bench transports');
      expect(markdown).toContain(
        '20000 messages at concurrency 64, 2000 messages at concurrency 1',
      );
      expect(markdown).toContain('| 0.82× |');
      expect(markdown).toContain('| 0.92× |');
      expect(markdown).toContain('| Redis CPU µs / msg |');
      expect(markdown).toMatch(/ 2\.000 \| +50 \| +7 \|/);
      expect(markdown).toContain('| machine CPU µs / msg | machine busy % |');
      expect(markdown).toMatch(/\| +20 \| +380 \| +97 \| +80 \|/);
      expect(markdown).toMatch(/\| hand +\| 64 +\| SET ×2\.000 +\|/);
      expect(markdown).toMatch(/\| idemq +\| 64 +\| EVALSHA ×0\.200 +\|/);
      expect(markdown).toContain('| idemq at concurrency 64: msg/s vs raw ');
    }
  });

  it('fills each transport block of the document and nothing else', () => {
    const other = '<!-- bench:begin (written by `pnpm bench --doc`; do not edit by hand) -->';
    const blocks = (['rabbitmq', 'kafka', 'sqs'] as const)
      .map((t) => `${transportMarkers(t).begin}\nold ${t}\n${transportMarkers(t).end}`)
      .join('\n\n');
    const document = `# t\n\n${other}\nkept\n<!-- bench:end -->\n\n${blocks}\n`;
    const spliced = spliceTransportDocument(document, report('kafka'), 'pnpm bench transports');
    expect(spliced).toContain(`${other}\nkept\n<!-- bench:end -->`);
    expect(spliced).toContain('\nold rabbitmq\n');
    expect(spliced).toContain('\nold sqs\n');
    expect(spliced).not.toContain('\nold kafka\n');
    expect(spliced).toContain(transportMarkdown(report('kafka'), 'pnpm bench transports'));
    expect(() => spliceTransportDocument('# no markers', report('sqs'), 'x')).toThrow(/no <!--/);
  });
});

describe('checkRound', () => {
  const result = (extra: Partial<ConsumeResult> = {}): ConsumeResult => ({
    run: 0,
    source: 'q',
    messages: 100,
    ms: 10,
    startMs: 1,
    messagesPerSecond: 10_000,
    acked: 100,
    handlerRuns: 100,
    distinctIds: 100,
    duplicateRuns: 0,
    events: {},
    cpuMicros: 1,
    machineCpuMicros: 2,
    ...extra,
  });

  it('wants one Redis record per message from the hand-written and idemq consumers', () => {
    expect(checkRound('raw', result(), 0, 0, 0)).toEqual([]);
    expect(checkRound('hand', result({ keysDeleted: 100 }), 0, 0, 0)).toEqual([]);
    expect(checkRound('hand', result({ keysDeleted: 99 }), 0, 0, 0)).toEqual([
      'run 1: 99 Redis records for 100 messages',
    ]);
    expect(
      checkRound('idemq', result({ keysDeleted: 100, events: { processed: 100 } }), 0, 0, 0),
    ).toEqual([]);
  });
});
