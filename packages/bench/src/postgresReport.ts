import type { BenchReport } from './bench.js';
import { describeMachine } from './machine.js';
import { commandLine, commandSequences, rowProblems } from './reportParts.js';
import { fixed, goalsSection, type TableFormat } from './table.js';

/** The PostgreSQL store's block of a report: its rows, the statements they sent, its goals. */
export function renderPostgres(report: BenchReport, command: string, table: TableFormat): string {
  const { machine, options } = report;
  const rows = report.rows.filter((row) => row.store === 'postgres');
  const out: string[] = [];
  out.push(
    `${commandLine(report, command)} Each contender has a pg Pool of ${options.postgresPoolSize} connections ` +
      '(idle ones kept) and a table of its own (`migrate()` for idemq, `CREATE TABLE` for the baseline), ' +
      'emptied (TRUNCATE) after each round and dropped at the end; the baseline sends its statements ' +
      'unnamed, as `pool.query(text, values)` does, and the store with its defaults (named statements, ' +
      'coalescing).',
  );
  out.push(
    describeMachine(
      machine,
      [
        `PostgreSQL ${machine.postgres ?? 'unknown'} at ${options.postgresUrl}`,
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
        'p50 ms',
        'p99 ms',
        'client CPU µs / msg',
        'PostgreSQL CPU µs / msg',
        'table bytes / record',
        'peak RSS MiB',
      ],
      rows.map((row) => [
        row.label,
        String(row.concurrency),
        String(Math.round(row.messagesPerSecond)),
        row.vsBaseline === undefined ? '–' : `${fixed(row.vsBaseline, 2)}×`,
        fixed(row.roundTripsPerProcessed, 3),
        fixed(row.roundTripsPerDuplicate, 3),
        fixed(row.p50Ms, 3),
        fixed(row.p99Ms, 3),
        fixed(row.cpuMicrosPerMessage, 0),
        fixed(row.serverCpuMicrosPerMessage, 0),
        fixed(row.bytesPerRecord, 0),
        fixed(row.peakRssBytes / 2 ** 20, 0),
      ]),
    ),
  );
  const sequences = commandSequences(rows);
  if (sequences.length > 0) {
    out.push('');
    out.push('Statements each contender sent, per message (client side, lowest concurrency):');
    out.push('');
    out.push(table(['contender', 'per processed message', 'per duplicate'], sequences, false));
  }
  out.push(
    ...goalsSection(
      report.goals.filter((goal) => goal.store === 'postgres'),
      table,
    ),
  );
  out.push(
    ...rowProblems(
      rows,
      'Shared server: other clients were busy during some measured phases, so the PostgreSQL ' +
        'CPU figures are upper bounds there (round trips are counted in-process and exact):',
    ),
  );
  return out.join('\n');
}
