import { describeMachine } from '../machine.js';
import {
  type DocumentMarkers,
  fixed,
  goalsSection,
  inBothFormats,
  listSection,
  spliceBlock,
  type TableFormat,
} from '../table.js';
import type { TransportReport } from './run.js';
import type { TransportName } from './types.js';

/** The report as Markdown (a transport's block of docs/performance.md) and for a terminal. */
export const { markdown: transportMarkdown, text: transportText } = inBothFormats(render);

/** What the consumers shared besides the concurrency, per transport. */
function setting(report: TransportReport): string {
  const { settings } = report.options;
  switch (report.transport) {
    case 'rabbitmq':
      return `${settings.queueType} queues, prefetch = concurrency`;
    case 'kafka':
      return `${settings.partitions} partitions, raw partitionsConsumedConcurrently ${settings.partitions}, idemq partitionConcurrency = concurrency`;
    case 'sqs':
      return `standard queues, ⌈concurrency / 10⌉ polls of ≤ 10 messages each, ${settings.sqsWaitTimeMs / 1_000} s long polls`;
  }
}

function render(report: TransportReport, command: string, table: TableFormat): string {
  const { machine, options } = report;
  const sizes = options.concurrency
    .map(
      (c) =>
        `${c === 1 ? Math.min(options.messages, options.sequentialMessages) : options.messages} messages at concurrency ${c}`,
    )
    .join(', ');
  const out: string[] = [];
  out.push(
    `Command: \`${command}\` — ${sizes} per round (${setting(report)}), ` +
      `${options.warmupMessages > 0 ? `an unmeasured warm-up of ≤ ${options.warmupMessages} messages per consumer, ` : ''}` +
      `median of ${options.runs} round(s) each, the consumers alternating, ` +
      `${options.isolation === 'process' ? 'one child process per consumer and concurrency' : 'in-process'}.`,
  );
  out.push(
    describeMachine(machine, [machine.broker, machine.redis], report.startedAt, report.durationMs),
  );
  out.push('');
  out.push(
    table(
      [
        'consumer',
        'concurrency',
        'messages',
        'msg/s',
        '× raw',
        'msg/s per run',
        'start ms',
        'Redis round trips / msg',
        'consumer CPU µs / msg',
        'Redis CPU µs / msg',
        'consumer CPU % of a core',
        'machine CPU µs / msg',
        'machine busy %',
        'peak RSS MiB',
      ],
      report.rows.map((row) => [
        row.label,
        String(row.concurrency),
        String(row.messages),
        String(Math.round(row.messagesPerSecond)),
        row.vsRaw === undefined ? '–' : `${fixed(row.vsRaw, 2)}×`,
        row.rounds.map((r) => Math.round(r.messagesPerSecond)).join(' / '),
        String(Math.round(row.startMs)),
        row.roundTripsPerMessage === undefined ? '–' : fixed(row.roundTripsPerMessage, 3),
        fixed(row.cpuMicrosPerMessage, 0),
        row.redisCpuMicrosPerMessage === undefined ? '–' : fixed(row.redisCpuMicrosPerMessage, 0),
        fixed(row.cpuShare * 100, 0),
        fixed(row.machineCpuMicrosPerMessage, 0),
        fixed(row.machineBusyShare * 100, 0),
        fixed(row.peakRssBytes / 2 ** 20, 0),
      ]),
    ),
  );
  const commands = report.rows.filter((r) => r.commandsPerMessage !== undefined);
  if (commands.length > 0) {
    out.push('');
    out.push('Redis commands sent per message (client side, last round):');
    out.push('');
    out.push(
      table(
        ['consumer', 'concurrency', 'commands / message'],
        commands.map((r) => [
          r.consumer,
          String(r.concurrency),
          Object.entries(r.commandsPerMessage ?? {})
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([name, n]) => `${name.toUpperCase()} ×${fixed(n, 3)}`)
            .join(', ') || 'none',
        ]),
        false,
      ),
    );
  }
  out.push(...goalsSection(report.goals, table));
  out.push(
    ...listSection(
      'Anomalies (not every message was consumed exactly once):',
      report.rows.flatMap((row) =>
        row.anomalies.map((a) => `${row.label} concurrency ${row.concurrency}: ${a}`),
      ),
    ),
  );
  if (report.leftovers.length > 0) {
    out.push('');
    out.push(`Left on the broker: ${report.leftovers.join(', ')}`);
  }
  return out.join('\n');
}

/** Markers around the generated block of one transport's section of docs/performance.md. */
export function transportMarkers(transport: TransportName): DocumentMarkers {
  return {
    begin: `<!-- bench-transports:${transport}:begin (written by \`pnpm bench transports ${transport} --doc\`; do not edit by hand) -->`,
    end: `<!-- bench-transports:${transport}:end -->`,
  };
}

/** Replaces the block of `report.transport` in `document` with the report as Markdown. */
export function spliceTransportDocument(
  document: string,
  report: TransportReport,
  command: string,
): string {
  return spliceBlock(
    document,
    transportMarkers(report.transport),
    transportMarkdown(report, command),
  );
}
