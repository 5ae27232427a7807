import { type BenchReport, fixed, type Row } from './bench.js';
import { DUPLICATE_RATIO } from './workload.js';

type Cells = string[];

/** The report as Markdown: the tables `docs/performance.md` embeds. */
export function toMarkdown(report: BenchReport, command: string): string {
  return render(report, command, markdownTable);
}

/** The report for a terminal. */
export function toText(report: BenchReport, command: string): string {
  return render(report, command, textTable);
}

function render(
  report: BenchReport,
  command: string,
  table: (header: Cells, rows: Cells[], numbers?: boolean) => string,
): string {
  const { machine, options } = report;
  const out: string[] = [];
  out.push(
    `Command: \`${command}\` — ${options.ids} unique ids + ${Math.round(options.ids * DUPLICATE_RATIO)} duplicates per round, ` +
      `median of ${options.runs} round(s), ${options.isolation === 'process' ? 'one child process per contender and concurrency' : 'in-process'}.`,
  );
  out.push(
    `Machine: ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, ${machine.os}; ` +
      `Node ${machine.node}; Redis ${machine.redis} at ${options.redisUrl}; ${report.startedAt}; ` +
      `took ${Math.round(report.durationMs / 1000)} s; 1-min load average ${fixed(machine.loadAverage[0], 2)} at start, ` +
      `${fixed(machine.loadAverage[1], 2)} at end.`,
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
  if (report.goals.length > 0) {
    out.push('');
    out.push('Goals:');
    out.push('');
    out.push(
      table(
        ['goal', 'target', 'this run', 'met'],
        report.goals.map((g) => [g.name, g.target, g.actual, g.met ? 'yes' : '**no**']),
        false,
      ),
    );
  }
  const anomalies = report.rows.flatMap((row) =>
    row.anomalies.map((a) => `${row.label} c=${row.concurrency}: ${a}`),
  );
  if (anomalies.length > 0) {
    out.push('');
    out.push('Anomalies (the workload was not handled as expected):');
    out.push('');
    for (const a of anomalies) out.push(`- ${a}`);
  }
  const noise = report.rows.flatMap((row) =>
    row.noise.map((n) => `${row.label} c=${row.concurrency}: ${n}`),
  );
  if (noise.length > 0) {
    out.push('');
    out.push(
      'Shared server: other clients were active during some measured phases, so the INFO-based ' +
        '"Redis cmds" figures are upper bounds there (round trips are counted in-process and exact):',
    );
    out.push('');
    for (const n of noise) out.push(`- ${n}`);
  }
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

/**
 * A Markdown table laid out the way Biome formats one (cells padded to the column width, the
 * delimiter row at least 3 wide, numbers right-aligned), so a generated document passes
 * `biome check` as written.
 */
function markdownTable(header: Cells, rows: Cells[], numbers = true): string {
  const widths = header.map((h, i) =>
    Math.max(3, h.length, ...rows.map((r) => (r[i] ?? '').length)),
  );
  const right = (i: number) => numbers && i > 0;
  const line = (cells: Cells) =>
    `| ${cells
      .map((cell, i) => (right(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join(' | ')} |`;
  const rule = widths.map((w, i) => (right(i) ? `${'-'.repeat(w - 1)}:` : '-'.repeat(w)));
  return [line(header), `| ${rule.join(' | ')} |`, ...rows.map(line)].join('\n');
}

function textTable(header: Cells, rows: Cells[], numbers = true): string {
  const plain = (cell: string) => cell.replace(/\*\*/g, '');
  const widths = header.map((h, i) =>
    Math.max(h.length, ...rows.map((r) => plain(r[i] ?? '').length)),
  );
  const line = (cells: Cells) =>
    cells
      .map((cell, i) => {
        const text = plain(cell);
        const width = widths[i] ?? 0;
        return numbers && i > 0 ? text.padStart(width) : text.padEnd(width);
      })
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** Markers around the generated part of a Markdown document. */
export const DOC_BEGIN =
  '<!-- bench:begin (written by `pnpm bench --doc`; do not edit by hand) -->';
export const DOC_END = '<!-- bench:end -->';

/** Replaces the generated block of `document` (between the markers) with `generated`. */
export function spliceDocument(document: string, generated: string): string {
  const begin = document.indexOf(DOC_BEGIN);
  const end = document.indexOf(DOC_END);
  if (begin < 0 || end < begin) {
    throw new Error(`the document has no ${DOC_BEGIN} … ${DOC_END} block to fill`);
  }
  return `${document.slice(0, begin + DOC_BEGIN.length)}\n\n${generated}\n\n${document.slice(end)}`;
}
