import { it } from 'vitest';

/** A case's environment: what it opened is closed by `dispose`. */
export interface CaseEnv {
  dispose(): Promise<void>;
}

/** One case, registered under its id (e.g. `C06`) and a title that states what it asserts. */
export type CaseBody<E> = (env: E) => Promise<void>;

/**
 * Registers the cases of one suite inside a vitest `describe`, gives each a fresh environment
 * that is disposed when the case finishes (pass or fail), and reports once which cases were not
 * registered and why.
 */
export class Suite<E extends CaseEnv, H> {
  private readonly omitted: Array<{ id: string; reason: string }> = [];

  constructor(
    /** The harness the suite runs against: registration reads its capabilities. */
    readonly harness: H,
    private readonly createEnv: () => E,
    private readonly caseTimeoutMs: number,
  ) {}

  /** Registers case `id`. */
  case(id: string, title: string, body: CaseBody<E>): void {
    it(
      `${id} ${title}`,
      async (context) => {
        const env = this.createEnv();
        context.onTestFinished(() => env.dispose());
        await body(env);
      },
      this.caseTimeoutMs,
    );
  }

  /** Registers case `id`, unless `reason` says why it cannot apply: then it is left out. */
  caseUnless(reason: string | undefined, id: string, title: string, body: CaseBody<E>): void {
    if (reason === undefined) this.case(id, title, body);
    else this.omit(id, reason);
  }

  /** Leaves case `id` out, and says why in the one-time report. */
  omit(id: string, reason: string): void {
    this.omitted.push({ id, reason });
  }

  /** Prints (once, at collection) the cases not registered for this harness. */
  report(suiteName: string): void {
    if (this.omitted.length === 0) return;
    const lines = this.omitted.map(({ id, reason }) => `  ${id}: ${reason}`).join('\n');
    console.info(`[${suiteName}] cases not registered:\n${lines}`);
  }
}
