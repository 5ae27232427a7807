import type { CaseRegistrar, CaseRun } from './suite.js';

/** A case taken out of a suite, to be run outside vitest's collection (negative controls). */
export interface CollectedCase {
  /** The case id, e.g. `S03`; several cases may share one. */
  id: string;
  /** The id and title, as the vitest test is named. */
  name: string;
  run: CaseRun;
  timeoutMs: number;
}

/** How one collected case ended. */
export interface CaseResult {
  id: string;
  name: string;
  passed: boolean;
  /** Why it failed. */
  error?: unknown;
}

/** The ids of the cases that failed, once each, sorted: what a negative control asserts. */
export function failedCaseIds(results: readonly CaseResult[]): string[] {
  return [...new Set(results.filter((r) => !r.passed).map((r) => r.id))].sort();
}

/** One line per failed case, its name and the first line of its error: an assertion's message. */
export function describeFailedCases(results: readonly CaseResult[]): string {
  return results
    .filter((r) => !r.passed)
    .map((r) => `${r.name}: ${String(r.error).split('\n')[0]}`)
    .join('\n');
}

/** A registrar that keeps the cases in a list instead of registering tests. */
export class CaseList implements CaseRegistrar {
  readonly cases: CollectedCase[] = [];
  readonly omissions: Array<{ id: string; name: string }> = [];

  test(id: string, name: string, run: CaseRun, timeoutMs: number): void {
    this.cases.push({ id, name, run, timeoutMs });
  }

  omitted(id: string, name: string): void {
    this.omissions.push({ id, name });
  }
}

/** Options of `runCollectedCases`. */
export interface RunCasesOptions {
  /** Cases run at once. @default 8 */
  concurrency?: number;
}

/**
 * Runs collected cases, `concurrency` at a time, and says which passed. A case that fails or
 * outlives its timeout counts as failed; its cleanup runs either way.
 */
export async function runCollectedCases(
  cases: readonly CollectedCase[],
  options: RunCasesOptions = {},
): Promise<CaseResult[]> {
  const results: CaseResult[] = new Array(cases.length);
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const index = next++;
      const collected = cases[index];
      if (collected) results[index] = await runOne(collected);
    }
  };
  const workers = Math.max(1, Math.min(options.concurrency ?? 8, cases.length));
  await Promise.all(Array.from({ length: workers }, worker));
  return results;
}

async function runOne({ id, name, run, timeoutMs }: CollectedCase): Promise<CaseResult> {
  const cleanups: Array<() => Promise<void>> = [];
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
  });
  let result: CaseResult;
  try {
    await Promise.race([run((cleanup) => cleanups.push(cleanup)), timedOut]);
    result = { id, name, passed: true };
  } catch (error) {
    result = { id, name, passed: false, error };
  } finally {
    clearTimeout(timer);
  }
  for (const cleanup of cleanups.reverse()) {
    // A close() that throws is itself a conformance failure, as it is under vitest.
    await cleanup().catch((error: unknown) => {
      if (result.passed) result = { id, name, passed: false, error };
    });
  }
  return result;
}
