/** The figures of a run: one row per (transport, scenario), printed as a table and kept as JSON. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export interface FiguresRow {
  transport: string;
  scenario: string;
  consumers: number;
  /** The store's durability profile (F03 restarts it). */
  storeProfile: string;
  /** `process`: child processes, SIGKILLed for real; `in-process`: simulated crashes (memory). */
  consumerKind: 'process' | 'in-process';
  /** Unique ids (healthy + poison). */
  messages: number;
  /** Copies published, duplicates and bad inputs included. */
  published: number;
  duplicatesInjected: number;
  badInputs: number;
  kills: number;
  /** Store restarts after a SIGTERM. */
  storeRestarts: number;
  /** Store restarts after a SIGKILL. */
  storeKills: number;
  brokerBreaks: number;
  /** Restarts of the run's private broker. */
  brokerRestarts: number;
  executions: number;
  completions: number;
  /** Of `completions`: seen only in the store, the ledger write killed with its process. */
  completionsSeenOnlyInStore: number;
  completedTwice: number;
  lost: number;
  deadLettered: number;
  deadLetteredByCode: Record<string, number>;
  /** Executions − completions: the at-least-once cost. */
  reExecutions: number;
  /** Re-executions of healthy ids the scenario's bound allowed, given the faults injected. */
  reExecutionsAllowed: number;
  /** Re-executions that found their effect already applied (absorbed by the fenced write). */
  replayedEffects: number;
  /** Zombie effects refused by the fencing token. */
  staleEffectsRefused: number;
  /** `lease-lost` events (store): zombies whose completion was refused. */
  leaseLost: number;
  brokerLeaseLost: number;
  unclaimedExecutions: number;
  duplicatesSkipped: number;
  storeErrors: number;
  /** Store keys left without an expiry after the run (must be 0). */
  storeKeysWithoutTtl: number;
  wallMs: number;
  seed: number;
  passed: boolean;
}

const COLUMNS: Array<[string, (row: FiguresRow) => string | number]> = [
  ['transport', (r) => r.transport],
  ['scenario', (r) => r.scenario],
  ['consumers', (r) => `${r.consumers}${r.consumerKind === 'in-process' ? ' (in-proc)' : ''}`],
  ['messages', (r) => r.messages],
  ['dups injected', (r) => r.duplicatesInjected],
  ['bad inputs', (r) => r.badInputs],
  ['kills', (r) => (r.consumerKind === 'in-process' && r.kills ? `${r.kills} (sim)` : r.kills)],
  ['restarts', restartsCell],
  ['executions', (r) => r.executions],
  ['completions', (r) => r.completions],
  ['re-executions allowed', (r) => r.reExecutionsAllowed],
  ['completed twice', (r) => r.completedTwice],
  ['lost', (r) => r.lost],
  ['dead-lettered', (r) => r.deadLettered],
  ['lease-lost', (r) => r.leaseLost],
  ['replayed effects', (r) => r.replayedEffects],
  ['unclaimed runs', (r) => r.unclaimedExecutions],
  ['wall time', (r) => `${(r.wallMs / 1000).toFixed(1)} s`],
  ['result', (r) => (r.passed ? 'pass' : 'FAIL')],
];

/** Store restarts (SIGKILLs among them) and broker faults (real restarts among them). */
function restartsCell(row: FiguresRow): string {
  const store = row.storeRestarts + row.storeKills;
  const killed = row.storeKills > 0 ? ` (${row.storeKills} SIGKILL)` : '';
  const broker = row.brokerBreaks + row.brokerRestarts;
  const restarted = row.brokerRestarts > 0 ? ` (${row.brokerRestarts} restart)` : '';
  return `${store} store${killed} / ${broker} broker${restarted}`;
}

/** A Markdown table of `rows`, as printed and pasted into docs/reliability.md. */
export function figuresTable(rows: readonly FiguresRow[]): string {
  const header = `| ${COLUMNS.map(([name]) => name).join(' | ')} |`;
  const rule = `|${COLUMNS.map(() => '---').join('|')}|`;
  const lines = rows.map((row) => `| ${COLUMNS.map(([, cell]) => cell(row)).join(' | ')} |`);
  return [header, rule, ...lines].join('\n');
}

/** Writes `rows` as JSON (with the command that produced them) to `path`. */
export function writeFigures(path: string, command: string, rows: readonly FiguresRow[]): void {
  mkdirSync(dirname(path), { recursive: true });
  const document = { command, at: new Date().toISOString(), rows };
  writeFileSync(path, `${JSON.stringify(document, null, 2)}\n`);
}
