#!/usr/bin/env node
// Sums vitest's per-package "Tests" lines from a turbo log into one closing line, so a CI log
// ends with the totals: "N passed, N failed" (", N skipped" when any were).
import { readFileSync } from 'node:fs';

const ESCAPE = String.fromCharCode(27);
const log = readFileSync(process.argv[2] ?? 0, 'utf8').replaceAll(
  new RegExp(`${ESCAPE}\\[[0-9;]*m`, 'g'),
  '',
);
const totals = { passed: 0, failed: 0, skipped: 0 };
for (const line of log.split('\n')) {
  const summary = /\bTests\s+(.*)\(\d+\)\s*$/.exec(line);
  if (!summary?.[1]) continue;
  for (const [, count, kind] of summary[1].matchAll(/(\d+)\s+(passed|failed|skipped)/g)) {
    totals[kind] += Number(count);
  }
}
const skipped = totals.skipped > 0 ? `, ${totals.skipped} skipped` : '';
console.log(`${totals.passed} passed, ${totals.failed} failed${skipped}`);
// A run that executed nothing is a failure, not a success.
process.exitCode = totals.passed + totals.failed === 0 ? 1 : 0;
