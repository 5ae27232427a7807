/** A case's environment: what it opened is closed by `dispose`. */
export interface CaseEnv {
  dispose(): Promise<void>;
}

/** One case, registered under its id (e.g. `C06`) and a title that states what it asserts. */
export type CaseBody<E> = (env: E) => Promise<void>;

/** Runs a case; `onFinished` registers cleanup that must run however the case ends. */
export type CaseRun = (onFinished: (cleanup: () => Promise<void>) => void) => Promise<void>;

/**
 * Where a suite's cases go: vitest's `it` for the suites users run, a list for the negative
 * controls that run the cases against broken implementations.
 */
export interface CaseRegistrar {
  test(id: string, name: string, run: CaseRun, timeoutMs: number): void;
  /** A case that cannot apply here; `name` carries the reason. */
  omitted(id: string, name: string): void;
}

/** What `Suite.omit` records: shown in the test name and in the collection-time report. */
export interface Omission {
  id: string;
  reason: string;
}

/** Which case ids a run registers; the others are left out entirely. */
export type CaseSelection = (id: string) => boolean;

/**
 * Registers the cases of one suite, gives each a fresh environment that is disposed when the
 * case finishes (pass or fail), and registers every case that cannot apply as a skipped test
 * whose name says why, so that test counts show it. Cases outside `selected` are not registered
 * at all, not even as skipped: a partial run (another store under the same broker, say) sits
 * beside a full run of the suite elsewhere, which accounts for them.
 */
export class Suite<E extends CaseEnv, H> {
  private readonly omissions: Omission[] = [];
  private registeredCount = 0;

  constructor(
    /** The harness the suite runs against: registration reads its capabilities. */
    readonly harness: H,
    private readonly createEnv: () => E,
    private readonly caseTimeoutMs: number,
    private readonly registrar: CaseRegistrar,
    /** @default every case */
    private readonly selected: CaseSelection = () => true,
  ) {}

  /** Registers case `id`, when selected. */
  case(id: string, title: string, body: CaseBody<E>): void {
    if (!this.selected(id)) return;
    const run: CaseRun = async (onFinished) => {
      const env = this.createEnv();
      onFinished(() => env.dispose());
      await body(env);
    };
    this.registeredCount += 1;
    this.registrar.test(id, `${id} ${title}`, run, this.caseTimeoutMs);
  }

  /** Registers case `id`, unless `reason` says why it cannot apply: then it is omitted. */
  caseUnless(reason: string | undefined, id: string, title: string, body: CaseBody<E>): void {
    if (reason === undefined) this.case(id, title, body);
    else this.omit(id, reason);
  }

  /** Registers case `id`, when selected, as skipped, with the reason it cannot apply in its name. */
  omit(id: string, reason: string): void {
    if (!this.selected(id)) return;
    this.omissions.push({ id, reason });
    this.registrar.omitted(id, `${id} omitted: ${reason}`);
  }

  /** The cases omitted so far. */
  get omitted(): readonly Omission[] {
    return this.omissions;
  }

  /** How many cases run (the omitted ones not counted). */
  get registered(): number {
    return this.registeredCount;
  }

  /**
   * Prints (once, at collection) the suite's counts and one line per omitted case, in a form the
   * CI summary (`scripts/testSummary.mjs`) collects:
   * `[idemq-conformance] suite <suite> | <n> run, <m> omitted` and
   * `[idemq-conformance] omitted <suite> | <id>: <reason>`.
   */
  report(suiteName: string): void {
    const counts = `${this.registeredCount} run, ${this.omissions.length} omitted`;
    console.info(`[idemq-conformance] suite ${suiteName} | ${counts}`);
    for (const { id, reason } of this.omissions) {
      console.info(`[idemq-conformance] omitted ${suiteName} | ${id}: ${reason}`);
    }
  }
}
