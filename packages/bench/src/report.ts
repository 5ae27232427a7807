import type { BenchReport, Row } from './bench.js';
import { describeMachine } from './machine.js';
import {
  type Cells,
  type DocumentMarkers,
  fixed,
  goalsSection,
  inBothFormats,
  listSection,
  spliceBlock,
  type TableFormat,
} from './table.js';
import { DUPLICATE_DISTANCE, DUPLICATE_RATIO } from './workload.js';

/** The report as Markdown (the tables `docs/performance.md` embeds) and for a terminal. */
export const { markdown: toMarkdown, text: toText } = inBothFormats(render);

function render(report: BenchReport, command: string, table: TableFormat): string {
  const { machine, options } = report;
  const out: string[] = [];
  out.push(
    `Command: \`${command}\` — ${options.ids} unique ids with ${Math.round(options.ids * DUPLICATE_RATIO)} duplicates mixed in per round ` +
      `(each ≥ ${DUPLICATE_DISTANCE} messages after its original; every call started in a task of its own), ` +
      `median of ${options.runs} round(s), ${options.isolation === 'process' ? 'one child process per contender and concurrency' : 'in-process'}.`,
  );
  out.push(
    describeMachine(
      machine,
      [
        `Redis ${machine.redis} at ${options.redisUrl}`,
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
      report.rows.map((row) => [
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
  const sequences = commandSequences(report.rows);
  if (sequences.length > 0) {
    out.push('');
    out.push('Commands each contender sent, per message (client side, lowest concurrency):');
    out.push('');
    out.push(table(['contender', 'per processed message', 'per duplicate'], sequences, false));
  }
  out.push(...goalsSection(report.goals, table));
  const anomalies = report.rows.flatMap((row) =>
    row.anomalies.map((a) => `${row.label} c=${row.concurrency}: ${a}`),
  );
  out.push(...listSection('Anomalies (the workload was not handled as expected):', anomalies));
  const noise = report.rows.flatMap((row) =>
    row.noise.map((n) => `${row.label} c=${row.concurrency}: ${n}`),
  );
  out.push(
    ...listSection(
      'Shared server: other clients were active during some measured phases, so the INFO-based ' +
        '"Redis cmds" figures are upper bounds there (round trips are counted in-process and exact):',
      noise,
    ),
  );
  return out.join('\n');
}

function commandSequences(rows: readonly Row[]): Cells[] {
  const lowest = Math.min(...rows.map((r) => r.concurrency));
  const describe = (counts: Record<string, number>) => {
    const parts = Object.entries(counts)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, perMessage]) => `${name.toUpperCase()} ×${fixed(perMessage, 2)}`);
    return parts.length > 0 ? parts.join(', ') : 'none';
  };
  return rows
    .filter((r) => r.concurrency === lowest)
    .map((r) => [r.label, describe(r.commandsPerProcessed), describe(r.commandsPerDuplicate)]);
}

/** Markers around the generated part of a Markdown document. */
export const DOC_BEGIN =
  '<!-- bench:begin (written by `pnpm bench --doc`; do not edit by hand) -->';
export const DOC_END = '<!-- bench:end -->';

const STORE_MARKERS: DocumentMarkers = { begin: DOC_BEGIN, end: DOC_END };

/** Replaces the generated block of `document` (between the markers) with `generated`. */
export function spliceDocument(document: string, generated: string): string {
  return spliceBlock(document, STORE_MARKERS, generated);
}
