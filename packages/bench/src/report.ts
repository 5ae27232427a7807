import type { BenchReport } from './bench.js';
import { STORES, type StoreName } from './contenders/index.js';
import { describeMachine } from './machine.js';
import { renderPostgres } from './postgresReport.js';
import { commandLine, commandSequences, rowProblems } from './reportParts.js';
import {
  type DocumentMarkers,
  fixed,
  goalsSection,
  inBothFormats,
  spliceBlock,
  type TableFormat,
} from './table.js';

/** One store's block of a report. */
interface StoreSection {
  report: BenchReport;
  store: StoreName;
}

const blocks = inBothFormats((section: StoreSection, command: string, table: TableFormat) =>
  section.store === 'redis'
    ? renderRedis(section.report, command, table)
    : renderPostgres(section.report, command, table),
);

/** The stores the report has rows of, in table order. */
function storesOf(report: BenchReport): StoreName[] {
  return STORES.filter((store) => report.rows.some((row) => row.store === store));
}

/** The report as Markdown: the block of each store it has rows of (what `--doc` writes). */
export function toMarkdown(
  report: BenchReport,
  command: string,
): Partial<Record<StoreName, string>> {
  return Object.fromEntries(
    storesOf(report).map((store) => [store, blocks.markdown({ report, store }, command)]),
  );
}

/** The report for a terminal: each store's block, then the rows that were skipped and why. */
export function toText(report: BenchReport, command: string): string {
  return [
    ...storesOf(report).map((store) => blocks.text({ report, store }, command)),
    ...report.skipped,
  ].join('\n\n');
}

function renderRedis(report: BenchReport, command: string, table: TableFormat): string {
  const { machine, options } = report;
  const rows = report.rows.filter((row) => row.store === 'redis');
  const out: string[] = [];
  out.push(commandLine(report, command));
  out.push(
    describeMachine(
      machine,
      [
        `Redis ${machine.redis ?? 'unknown'} at ${options.redisUrl}`,
        ...(machine.pinning ? [machine.pinning] : []),
      ],
      report.startedAt,
      report.durationMs,
    ),
  );
  out.push('');
  out.push(
    table(
      [
        'contender',
        'c',
        'msg/s',
        '× baseline',
        'round trips / processed',
        'round trips / duplicate',
        'Redis cmds / processed',
        'Redis cmds / duplicate',
        'p50 ms',
        'p99 ms',
        'client CPU µs / msg',
        'Redis CPU µs / msg',
        'Redis bytes / record',
        'peak RSS MiB',
      ],
      rows.map((row) => [
        row.label,
        String(row.concurrency),
        String(Math.round(row.messagesPerSecond)),
        row.vsBaseline === undefined ? '–' : `${fixed(row.vsBaseline, 2)}×`,
        fixed(row.roundTripsPerProcessed, 3),
        fixed(row.roundTripsPerDuplicate, 3),
        fixed(row.serverCommandsPerProcessed, 2),
        fixed(row.serverCommandsPerDuplicate, 2),
        fixed(row.p50Ms, 3),
        fixed(row.p99Ms, 3),
        fixed(row.cpuMicrosPerMessage, 0),
        fixed(row.serverCpuMicrosPerMessage, 0),
        fixed(row.bytesPerRecord, 0),
        fixed(row.peakRssBytes / 2 ** 20, 0),
      ]),
    ),
  );
  if (report.ceilings.length > 0) {
    out.push('');
    out.push('Server ceiling (redis-benchmark on the same server, same run):');
    out.push('');
    out.push(
      table(
        ['clients', 'SET/s', 'GET/s', 'SET p50 ms', 'GET p50 ms'],
        report.ceilings.map((c) => [
          String(c.clients),
          String(Math.round(c.setPerSecond)),
          String(Math.round(c.getPerSecond)),
          fixed(c.setP50Ms, 3),
          fixed(c.getP50Ms, 3),
        ]),
      ),
    );
    out.push('');
    out.push(`\`${report.ceilings[0]?.command.replace(/ -c \d+ /, ' -c <clients> ')}\``);
  }
  const sequences = commandSequences(rows);
  if (sequences.length > 0) {
    out.push('');
    out.push('Commands each contender sent, per message (client side, lowest concurrency):');
    out.push('');
    out.push(table(['contender', 'per processed message', 'per duplicate'], sequences, false));
  }
  out.push(
    ...goalsSection(
      report.goals.filter((goal) => goal.store === 'redis'),
      table,
    ),
  );
  out.push(
    ...rowProblems(
      rows,
      'Shared server: other clients were active during some measured phases, so the INFO-based ' +
        '"Redis cmds" figures are upper bounds there (round trips are counted in-process and exact):',
    ),
  );
  return out.join('\n');
}

/** Markers around the generated part of a Markdown document: the Redis store's block. */
export const DOC_BEGIN =
  '<!-- bench:begin (written by `pnpm bench --doc`; do not edit by hand) -->';
export const DOC_END = '<!-- bench:end -->';

/** Markers around the PostgreSQL store's block. */
export const POSTGRES_DOC_BEGIN =
  '<!-- bench-postgres:begin (written by `pnpm bench --doc`; do not edit by hand) -->';
export const POSTGRES_DOC_END = '<!-- bench-postgres:end -->';

const MARKERS: Record<StoreName, DocumentMarkers> = {
  redis: { begin: DOC_BEGIN, end: DOC_END },
  postgres: { begin: POSTGRES_DOC_BEGIN, end: POSTGRES_DOC_END },
};

/** Replaces the block of each store in `generated` (between its markers); the rest is kept. */
export function spliceDocument(
  document: string,
  generated: Partial<Record<StoreName, string>>,
): string {
  let out = document;
  for (const store of STORES) {
    const block = generated[store];
    if (block !== undefined) out = spliceBlock(out, MARKERS[store], block);
  }
  return out;
}
