/** The end of a run: the invariants checked, the summary table, the JSON figures. */
import type { RunFigures } from './scenario.js';

/** Every broken invariant of a run, as sentences; empty when the run is correct. */
export function violations(figures: RunFigures): string[] {
  const problems: string[] = [];
  const sample = (ids: readonly string[]) => (ids.length > 0 ? ` (e.g. ${ids.join(', ')})` : '');
  if (figures.processedTwice > 0) {
    problems.push(
      `${figures.processedTwice} payment(s) charged or completed more than once${sample(figures.samples.processedTwice)}`,
    );
  }
  if (figures.lost > 0) {
    problems.push(
      `${figures.lost} payment(s) neither completed nor dead-lettered${sample(figures.samples.lost)}`,
    );
  }
  if (figures.completedAndDeadLettered > 0) {
    problems.push(`${figures.completedAndDeadLettered} completed payment(s) also dead-lettered`);
  }
  if (figures.unexpectedDeadLetters > 0) {
    problems.push(`${figures.unexpectedDeadLetters} payment(s) dead-lettered that were not poison`);
  }
  if (figures.unsettledCopies > 0) {
    problems.push(`${figures.unsettledCopies} published copie(s) never acked or dead-lettered`);
  }
  const db = figures.database;
  if (db && db.rows !== db.distinctPayments) {
    problems.push(
      `${db.table} holds ${db.rows} row(s) for ${db.distinctPayments} distinct payment(s): ` +
        'a payment charged more than once',
    );
  }
  if (db && (db.mismatched > 0 || db.distinctPayments !== figures.completed)) {
    problems.push(
      `${db.mismatched} payment(s) whose ledger rows disagree with their completion ` +
        `(${db.distinctPayments} charged, ${figures.completed} completed)`,
    );
  }
  if (figures.timedOut) problems.push('the run timed out before every payment was settled');
  return problems;
}

/** The human summary: a table of figures, then the verdict. */
export function formatSummary(figures: RunFigures): string {
  const n = (value: number) => value.toLocaleString('en-US');
  const mustBeZero = (value: number) => (value === 0 ? 'must be 0: ok' : 'must be 0: FAILED');
  const duplicatesSent = figures.sent - figures.uniqueIds;
  const rows: [string, string, string][] = [
    [
      'sent',
      n(figures.sent),
      `${n(figures.uniqueIds)} unique + ${n(duplicatesSent)} duplicates ` +
        `(${n(figures.concurrentDuplicates)} concurrent, ${n(figures.lateDuplicates)} after completion)`,
    ],
    ['delivered', n(figures.delivered), `to ${figures.consumers} consumers, redeliveries included`],
    ['handler runs', n(figures.handlerRuns), 'first attempts and retries'],
    [
      'completed',
      n(figures.completed),
      `unique − poison = ${n(figures.uniqueIds - figures.poison)}`,
    ],
    ['duplicates skipped', n(figures.duplicatesSkipped), 'acked without running the handler'],
    [
      'in-progress waits',
      n(figures.inProgressRedeliveries),
      'copies redelivered after the owner’s lease',
    ],
    [
      'retries',
      n(figures.retries),
      figures.database
        ? 'transient failures, killed connections and poison attempts'
        : 'transient failures and poison attempts',
    ],
    [
      'dead-lettered',
      n(figures.deadLettered),
      `poison ${n(figures.poison)} · ${n(figures.deadLetterMessages)} message(s) on the DLQ`,
    ],
    ['processed twice', n(figures.processedTwice), mustBeZero(figures.processedTwice)],
    ['lost', n(figures.lost), mustBeZero(figures.lost)],
  ];
  const db = figures.database;
  if (db) {
    const oneEach = db.rows === db.distinctPayments && db.distinctPayments === figures.completed;
    const other = db.rolledBack - db.failedAfterInsert - db.connectionsKilled;
    rows.push(
      ['ledger rows', n(db.rows), 'SELECT count(*) FROM ledger, after the run'],
      [
        'distinct payments',
        n(db.distinctPayments),
        `count(DISTINCT payment_id) = rows = completed: ${oneEach && db.mismatched === 0 ? 'ok' : 'FAILED'}`,
      ],
      [
        'runs rolled back',
        n(db.rolledBack),
        `${n(db.failedAfterInsert)} threw after their INSERT · ` +
          `${n(db.connectionsKilled)} connections killed before COMMIT` +
          (other === 0 ? '' : ` · ${n(other)} other`),
      ],
    );
  }
  if (figures.completedAndDeadLettered > 0 || figures.unexpectedDeadLetters > 0) {
    rows.push([
      'wrongly dead-lettered',
      n(figures.completedAndDeadLettered + figures.unexpectedDeadLetters),
      mustBeZero(1),
    ]);
  }
  if (figures.unsettledCopies > 0) {
    rows.push([
      'unsettled copies',
      n(figures.unsettledCopies),
      mustBeZero(figures.unsettledCopies),
    ]);
  }
  const anomalies = figures.leaseLost + figures.storeErrors + figures.errors;
  if (anomalies > 0) {
    rows.push([
      'anomalies',
      n(anomalies),
      `lease lost ${figures.leaseLost} · store errors ${figures.storeErrors} · errors ${figures.errors}`,
    ]);
  }
  rows.push(['elapsed', `${(figures.elapsedMs / 1000).toFixed(2)} s`, '']);

  const header =
    `idemq demo · transport ${figures.transport} · store ${figures.store} · ` +
    `${figures.consumers} consumers · seed ${figures.seed}` +
    (db ? `\nledger: ${db.table}, written in each run's transaction (dropped at the end)` : '');
  const problems = violations(figures);
  const verdict = figures.interrupted
    ? 'INTERRUPTED: the run was stopped before every payment was settled.'
    : problems.length === 0
      ? db
        ? 'OK: one ledger row per payment, committed with its completion; poison dead-lettered, ' +
          'nothing lost.'
        : 'OK: every payment charged exactly once, poison dead-lettered, nothing lost.'
      : `FAILED:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`;
  const errors = figures.samples.errors.map((error) => `  error: ${error}`);
  return [header, table(rows), verdict, ...errors].join('\n');
}

/** The figures as one JSON document, with the verdict, for scripts and CI. */
export function formatJson(figures: RunFigures): string {
  const problems = violations(figures);
  return JSON.stringify({ ...figures, ok: problems.length === 0, violations: problems }, null, 2);
}

/** A boxed three-column table; the middle column (numbers) is right-aligned. */
export function table(rows: readonly (readonly [string, string, string])[]): string {
  const widths = [0, 1, 2].map((column) =>
    Math.max(...rows.map((row) => row[column as 0 | 1 | 2].length)),
  ) as [number, number, number];
  const rule = (left: string, middle: string, right: string) =>
    `${left}${widths.map((width) => '─'.repeat(width + 2)).join(middle)}${right}`;
  const lines = rows.map(
    ([label, value, note]) =>
      `│ ${label.padEnd(widths[0])} │ ${value.padStart(widths[1])} │ ${note.padEnd(widths[2])} │`,
  );
  return [rule('┌', '┬', '┐'), ...lines, rule('└', '┴', '┘')].join('\n');
}
