import { fixed, type TransportReport } from './rabbitmq.js';

type Cells = string[];

/** The report as Markdown: what the "Consumers on RabbitMQ" section of docs/performance.md embeds. */
export function transportMarkdown(report: TransportReport, command: string): string {
  return render(report, command, markdownTable);
}

/** The report for a terminal. */
export function transportText(report: TransportReport, command: string): string {
  return render(report, command, textTable);
}

function render(
  report: TransportReport,
  command: string,
  table: (header: Cells, rows: Cells[], numbers?: boolean) => string,
): string {
  const { machine, options } = report;
  const sizes = options.prefetch
    .map(
      (p) =>
        `${p === 1 ? Math.min(options.messages, options.sequentialMessages) : options.messages} messages at prefetch ${p}`,
    )
    .join(', ');
  const out: string[] = [];
  out.push(
    `Command: \`${command}\` — ${sizes} per round (${options.queueType} queues), ` +
      `${options.warmupMessages > 0 ? `an unmeasured warm-up of ≤ ${options.warmupMessages} messages per consumer, ` : ''}` +
      `median of ${options.runs} round(s) each, the consumers alternating, ` +
      `${options.isolation === 'process' ? 'one child process per consumer and prefetch' : 'in-process'}.`,
  );
  out.push(
    `Machine: ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, ${machine.os}; ` +
      `Node ${machine.node}; RabbitMQ ${machine.rabbitmq} at ${options.amqpUrl}; ` +
      `Redis ${machine.redis} at ${options.redisUrl}; ${report.startedAt}; ` +
      `took ${Math.round(report.durationMs / 1000)} s; 1-min load average ` +
      `${fixed(machine.loadAverage[0], 2)} at start, ${fixed(machine.loadAverage[1], 2)} at end ` +
      `(shared machine: broker, Redis and consumer share its cores with other work).`,
  );
  out.push('');
  out.push(
    table(
      [
        'consumer',
        'prefetch',
        'messages',
        'msg/s',
        '× raw',
        'msg/s per run',
        'Redis script calls / msg',
        'Redis round trips / msg',
        'consumer CPU µs / msg',
        'consumer CPU % of a core',
        'peak RSS MiB',
      ],
      report.rows.map((row) => [
        row.label,
        String(row.prefetch),
        String(row.messages),
        String(Math.round(row.messagesPerSecond)),
        row.vsRaw === undefined ? '–' : `${fixed(row.vsRaw, 2)}×`,
        row.rounds.map((r) => Math.round(r.messagesPerSecond)).join(' / '),
        row.scriptCallsPerMessage === undefined ? '–' : fixed(row.scriptCallsPerMessage, 3),
        row.roundTripsPerMessage === undefined ? '–' : fixed(row.roundTripsPerMessage, 3),
        fixed(row.cpuMicrosPerMessage, 0),
        fixed(row.cpuShare * 100, 0),
        fixed(row.peakRssBytes / 2 ** 20, 0),
      ]),
    ),
  );
  const commands = report.rows.filter((r) => r.commandsPerMessage !== undefined);
  if (commands.length > 0) {
    out.push('');
    out.push('Redis commands idemq sent per message (client side, last round):');
    out.push('');
    out.push(
      table(
        ['prefetch', 'commands / message'],
        commands.map((r) => [
          String(r.prefetch),
          Object.entries(r.commandsPerMessage ?? {})
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([name, n]) => `${name.toUpperCase()} ×${fixed(n, 3)}`)
            .join(', ') || 'none',
        ]),
        false,
      ),
    );
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
    row.anomalies.map((a) => `${row.label} prefetch ${row.prefetch}: ${a}`),
  );
  if (anomalies.length > 0) {
    out.push('');
    out.push('Anomalies (not every message was consumed exactly once):');
    out.push('');
    for (const a of anomalies) out.push(`- ${a}`);
  }
  if (report.leftovers.length > 0) {
    out.push('');
    out.push(`Left on the broker: ${report.leftovers.join(', ')}`);
  }
  return out.join('\n');
}

/** A Markdown table laid out the way Biome formats one, so the document passes `biome check`. */
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

/** Markers around the generated part of the "Consumers on RabbitMQ" section. */
export const TRANSPORT_DOC_BEGIN =
  '<!-- bench-transports:begin (written by `pnpm bench transports --doc`; do not edit by hand) -->';
export const TRANSPORT_DOC_END = '<!-- bench-transports:end -->';

/** Replaces the transports block of `document` (between its markers) with `generated`. */
export function spliceTransportDocument(document: string, generated: string): string {
  const begin = document.indexOf(TRANSPORT_DOC_BEGIN);
  const end = document.indexOf(TRANSPORT_DOC_END);
  if (begin < 0 || end < begin) {
    throw new Error(
      `the document has no ${TRANSPORT_DOC_BEGIN} … ${TRANSPORT_DOC_END} block to fill`,
    );
  }
  return `${document.slice(0, begin + TRANSPORT_DOC_BEGIN.length)}\n\n${generated}\n\n${document.slice(end)}`;
}
