import { it } from 'vitest';
import type { CaseRegistrar } from './suite.js';

/** Registers cases as vitest tests; omitted cases as skipped tests, so vitest counts them. */
export const vitestRegistrar: CaseRegistrar = {
  test(_id, name, run, timeoutMs) {
    it(name, (context) => run((cleanup) => context.onTestFinished(cleanup)), timeoutMs);
  },
  omitted(_id, name) {
    it.skip(name, () => {});
  },
};
