import type { BenchReport, Row } from './bench.js';
import { type Cells, fixed, listSection } from './table.js';
import { DUPLICATE_DISTANCE, DUPLICATE_RATIO } from './workload.js';

/** The "Command:" line of a store's block: what ran, on which workload, how often. */
export function commandLine(report: BenchReport, command: string): string {
  const { options } = report;
  return (
    `Command: \`${command}\` — ${options.ids} unique ids with ${Math.round(options.ids * DUPLICATE_RATIO)} duplicates mixed in per round ` +
    `(each ≥ ${DUPLICATE_DISTANCE} messages after its original; every call started in a task of its own), ` +
    `median of ${options.runs} round(s), ${options.isolation === 'process' ? 'one child process per contender and concurrency' : 'in-process'}.`
  );
}

/** What each contender sent per message, by command (statement) name, at the lowest concurrency. */
export function commandSequences(rows: readonly Row[]): Cells[] {
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

/** The anomalies of `rows`, then the signs of a shared server under `noiseTitle`. */
export function rowProblems(rows: readonly Row[], noiseTitle: string): string[] {
  const anomalies = rows.flatMap((row) =>
    row.anomalies.map((a) => `${row.label} c=${row.concurrency}: ${a}`),
  );
  const noise = rows.flatMap((row) =>
    row.noise.map((n) => `${row.label} c=${row.concurrency}: ${n}`),
  );
  return [
    ...listSection('Anomalies (the workload was not handled as expected):', anomalies),
    ...listSection(noiseTitle, noise),
  ];
}
