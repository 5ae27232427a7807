import { ErrorCodes } from './codes.js';
import { IdemqError } from './idemqError.js';

/** Options were invalid; `problems` lists every bad field, not just the first. */
export class InvalidOptionsError extends IdemqError {
  readonly problems: readonly string[];
  constructor(component: string, problems: readonly string[]) {
    super(
      ErrorCodes.OPTIONS_INVALID,
      `Invalid ${component} options:\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
    this.problems = problems;
  }
}

/** A consumer used in the wrong state (started twice, say). */
export class ConsumerStateError extends IdemqError {
  constructor(message: string) {
    super(ErrorCodes.CONSUMER_STATE, message);
  }
}
