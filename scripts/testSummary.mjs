#!/usr/bin/env node
// Sums vitest's "Tests" lines from a CI log into one closing line, "N passed, N failed"
// (", N skipped" when any were), after a table per package of the turbo run, the cases run and
// omitted per conformance suite, and the omitted cases with their reasons (the only tests that
// are skipped).
import { readFileSync } from 'node:fs';

const ESCAPE = String.fromCharCode(27);
const log = readFileSync(process.argv[2] ?? 0, 'utf8').replaceAll(
  new RegExp(`${ESCAPE}\\[[0-9;]*m`, 'g'),
  '',
);

const emptyCounts = () => ({ passed: 0, failed: 0, skipped: 0 });
const totals = emptyCounts();
const perPackage = new Map();
const omissions = new Map();
const suites = new Map();
for (const line of log.split('\n')) {
  const suite = /\[idemq-conformance\] suite (.+?) \| (.+)$/.exec(line);
  if (suite?.[1] && suite[2]) {
    suites.set(suite[1], suite[2].trim());
    continue;
  }
  const omission = /\[idemq-conformance\] omitted (.+?) \| (.+)$/.exec(line);
  if (omission?.[1] && omission[2]) {
    const cases = omissions.get(omission[1]) ?? new Set();
    cases.add(omission[2].trim());
    omissions.set(omission[1], cases);
    continue;
  }
  const summary = /\bTests\s+(.*)\(\d+\)\s*$/.exec(line);
  if (!summary?.[1]) continue;
  // turbo prefixes each line of `pnpm test` with "<package>:test: ".
  const owner = /^(\S+):test: /.exec(line)?.[1];
  const counts = owner ? (perPackage.get(owner) ?? emptyCounts()) : undefined;
  for (const [, count, kind] of summary[1].matchAll(/(\d+)\s+(passed|failed|skipped)/g)) {
    totals[kind] += Number(count);
    if (counts) counts[kind] += Number(count);
  }
  if (owner && counts) perPackage.set(owner, counts);
}

const describe = ({ passed, failed, skipped }) =>
  `${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`;

if (perPackage.size > 0) {
  console.log('Tests per package (pnpm test):');
  const width = Math.max(...[...perPackage.keys()].map((name) => name.length));
  for (const [name, counts] of [...perPackage].sort(([a], [b]) => a.localeCompare(b))) {
    console.log(`  ${name.padEnd(width)}  ${describe(counts)}`);
  }
}
if (suites.size > 0) {
  console.log('Conformance suites (cases run, cases omitted):');
  for (const [name, counts] of [...suites].sort(([a], [b]) => a.localeCompare(b))) {
    console.log(`  ${name}: ${counts}`);
  }
}
if (omissions.size > 0) {
  let count = 0;
  for (const cases of omissions.values()) count += cases.size;
  console.log(`Conformance cases omitted (registered as skipped, with the reason): ${count}`);
  for (const [suite, cases] of [...omissions].sort(([a], [b]) => a.localeCompare(b))) {
    console.log(`  ${suite}: ${cases.size}`);
    for (const entry of cases) console.log(`    ${entry}`);
  }
}
console.log(describe(totals));
// A run that executed nothing is a failure, not a success.
process.exitCode = totals.passed + totals.failed === 0 ? 1 : 0;
