/** The end of a gRPC run: the invariants checked, the summary table, the JSON figures. */
import { mustBeZero, paymentVerdict, paymentViolations } from '../payments/paymentsVerdict.js';
import { table } from '../summary.js';
import type { GrpcRunFigures } from './grpcScenario.js';

/** Every broken invariant of a gRPC run, as sentences; empty when the run is correct. */
export function grpcViolations(figures: GrpcRunFigures): string[] {
  return paymentViolations(
    figures,
    figures.unexpectedStatuses > 0
      ? [
          `${figures.unexpectedStatuses} answer(s) neither OK, DEADLINE_EXCEEDED, ABORTED nor UNAVAILABLE`,
        ]
      : [],
  );
}

/** The human summary of a gRPC run. */
export function formatGrpcSummary(figures: GrpcRunFigures): string {
  const n = (value: number) => value.toLocaleString('en-US');
  const retries = figures.calls - figures.requested;
  const failurePercent = `${Math.round(figures.failureRate * 1000) / 10} %`;
  const rows: [string, string, string][] = [
    [
      'payments requested',
      n(figures.requested),
      `by ${figures.clients} clients, one idempotency-key each`,
    ],
    ['calls', n(figures.calls), 'first attempts and retries'],
    ['retries', n(Math.max(0, retries)), 'each with the idempotency-key of its first call'],
    [
      'deadline expiries',
      n(figures.deadlineExpiries),
      `DEADLINE_EXCEEDED after ${figures.deadlineMs} ms; the handler ran up to ${figures.maxHandlerMs} ms`,
    ],
    ['ABORTED', n(figures.aborted), 'retry while the first call was still charging'],
    [
      'UNAVAILABLE',
      n(figures.unavailable),
      'injected failures answered; not stored, so the retry runs again',
    ],
    ['replays', n(figures.replays), 'the first response again, idempotent-replayed: true'],
    [
      'handler runs',
      n(figures.handlerRuns),
      `${n(figures.charges)} charges + ${n(figures.injectedFailures)} injected failures (planned rate ${failurePercent})`,
    ],
    ['charged', n(figures.charged), `of ${n(figures.requested)} requested`],
    ['charged twice', n(figures.chargedTwice), mustBeZero(figures.chargedTwice)],
    ['lost', n(figures.lost), mustBeZero(figures.lost)],
  ];
  if (figures.unexpectedStatuses > 0) {
    rows.push([
      'other statuses',
      n(figures.unexpectedStatuses),
      mustBeZero(figures.unexpectedStatuses),
    ]);
  }
  rows.push(['elapsed', `${(figures.elapsedMs / 1000).toFixed(2)} s`, '']);
  const header =
    `idemq demo · transport grpc (${figures.server}) · store ${figures.store} · ` +
    `${figures.clients} clients · seed ${figures.seed}`;
  const verdict = paymentVerdict(figures, grpcViolations(figures));
  const errors = figures.samples.errors.map((error) => `  error: ${error}`);
  return [header, table(rows), verdict, ...errors].join('\n');
}

/** The figures as one JSON document, with the verdict. */
export function formatGrpcJson(figures: GrpcRunFigures): string {
  const problems = grpcViolations(figures);
  return JSON.stringify({ ...figures, ok: problems.length === 0, violations: problems }, null, 2);
}
