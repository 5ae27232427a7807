/** The end of an HTTP run: the invariants checked, the summary table, the JSON figures. */
import { mustBeZero, paymentVerdict, paymentViolations } from '../payments/paymentsVerdict.js';
import { table } from '../summary.js';
import type { HttpRunFigures } from './httpScenario.js';

/** Every broken invariant of an HTTP run, as sentences; empty when the run is correct. */
export function httpViolations(figures: HttpRunFigures): string[] {
  return paymentViolations(
    figures,
    figures.unexpectedStatuses > 0
      ? [`${figures.unexpectedStatuses} answer(s) neither 2xx, 409 nor a replay`]
      : [],
  );
}

/** The human summary of an HTTP run. */
export function formatHttpSummary(figures: HttpRunFigures): string {
  const n = (value: number) => value.toLocaleString('en-US');
  const retries = figures.attempts - figures.requested;
  const rows: [string, string, string][] = [
    ['payments requested', n(figures.requested), `by ${figures.clients} clients, one key each`],
    ['requests sent', n(figures.attempts), `${n(Math.max(0, retries))} retries with the same key`],
    [
      'client timeouts',
      n(figures.timeouts),
      `gave up after ${figures.clientTimeoutMs} ms; the route ran up to ${figures.maxRouteMs} ms`,
    ],
    ['409 in progress', n(figures.conflicts), 'retry while the first request was still charging'],
    ['replays', n(figures.replays), 'the first response again, Idempotent-Replayed: true'],
    ['route runs', n(figures.routeRuns), 'one per payment'],
    ['charged', n(figures.charged), `of ${n(figures.requested)} requested`],
    ['charged twice', n(figures.chargedTwice), mustBeZero(figures.chargedTwice)],
    ['lost', n(figures.lost), mustBeZero(figures.lost)],
  ];
  if (figures.unexpectedStatuses + figures.networkErrors > 0) {
    rows.push([
      'anomalies',
      n(figures.unexpectedStatuses + figures.networkErrors),
      `other statuses ${figures.unexpectedStatuses} · network errors ${figures.networkErrors}`,
    ]);
  }
  rows.push(['elapsed', `${(figures.elapsedMs / 1000).toFixed(2)} s`, '']);
  const header =
    `idemq demo · transport http (${figures.server}) · store ${figures.store} · ` +
    `${figures.clients} clients · seed ${figures.seed}`;
  const verdict = paymentVerdict(figures, httpViolations(figures));
  const errors = figures.samples.errors.map((error) => `  error: ${error}`);
  return [header, table(rows), verdict, ...errors].join('\n');
}

/** The figures as one JSON document, with the verdict. */
export function formatHttpJson(figures: HttpRunFigures): string {
  const problems = httpViolations(figures);
  return JSON.stringify({ ...figures, ok: problems.length === 0, violations: problems }, null, 2);
}
