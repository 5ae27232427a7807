/** The invariants and the verdict line shared by the payments API demos (HTTP, gRPC). */

/** What the shared invariants read of a run's figures. */
export interface PaymentFigures {
  /** Payments charged more than once. Must be 0. */
  chargedTwice: number;
  /** Payments whose client got no answer naming their charge. Must be 0. */
  lost: number;
  timedOut: boolean;
  interrupted: boolean;
  samples: { chargedTwice: string[]; lost: string[] };
}

/**
 * The broken invariants every payments run checks, as sentences: each payment charged at most
 * once, each client ended with its payment's charge, the run finished in time. `extra` are the
 * transport's own, listed before the timeout.
 */
export function paymentViolations(
  figures: PaymentFigures,
  extra: readonly string[] = [],
): string[] {
  const problems: string[] = [];
  const sample = (ids: readonly string[]) => (ids.length > 0 ? ` (e.g. ${ids.join(', ')})` : '');
  if (figures.chargedTwice > 0) {
    problems.push(
      `${figures.chargedTwice} payment(s) charged more than once${sample(figures.samples.chargedTwice)}`,
    );
  }
  if (figures.lost > 0) {
    problems.push(
      `${figures.lost} payment(s) whose client never got its charge${sample(figures.samples.lost)}`,
    );
  }
  problems.push(...extra);
  if (figures.timedOut) problems.push('the run timed out before every payment was answered');
  return problems;
}

/** The summary's last line(s): OK, INTERRUPTED, or FAILED with every problem. */
export function paymentVerdict(figures: PaymentFigures, problems: readonly string[]): string {
  if (figures.interrupted) {
    return 'INTERRUPTED: the run was stopped before every payment was answered.';
  }
  return problems.length === 0
    ? 'OK: every payment charged exactly once, every client got its charge.'
    : `FAILED:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`;
}

/** A row's note for a figure that must be 0. */
export function mustBeZero(value: number): string {
  return value === 0 ? 'must be 0: ok' : 'must be 0: FAILED';
}
