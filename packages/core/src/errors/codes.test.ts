import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as core from '../index.js';
import { ErrorCodes } from './codes.js';
import { IdemqError } from './idemqError.js';

const docsPath = new URL('../../../../docs/errors.md', import.meta.url);

/** The rows of docs/errors.md's table: code, and the class column as written. */
function documentedRows(): Array<{ code: string; classColumn: string }> {
  return [
    ...readFileSync(docsPath, 'utf8').matchAll(/^\|\s*`(IDEMQ_ERR_[A-Z_]+)`\s*\|([^|]*)\|/gm),
  ].map((match) => ({ code: match[1] as string, classColumn: (match[2] as string).trim() }));
}

/** Every class core exports that is an `IdemqError` (the base itself aside). */
function coreErrorClasses(): string[] {
  return Object.entries(core)
    .filter(
      ([name, value]) =>
        typeof value === 'function' &&
        name !== 'IdemqError' &&
        value.prototype instanceof IdemqError,
    )
    .map(([name]) => name);
}

describe('error codes', () => {
  const documented = documentedRows().map((row) => row.code);
  const defined = Object.values(ErrorCodes);

  it('docs/errors.md lists exactly the codes the code defines', () => {
    expect([...documented].sort()).toEqual([...defined].sort());
  });

  it('never defines one code twice', () => {
    expect(new Set(defined).size).toBe(defined.length);
  });

  it('follows the IDEMQ_ERR_<AREA>_<WHAT> shape', () => {
    for (const code of defined) expect(code).toMatch(/^IDEMQ_ERR_[A-Z]+(_[A-Z]+)+$/);
  });

  it("docs/errors.md names every error class core exports, and only classes core exports or an adapter's", () => {
    const named = new Set<string>();
    for (const { classColumn } of documentedRows()) {
      const name = /^`([A-Za-z]+)`/.exec(classColumn)?.[1];
      if (name === undefined) continue; // '—': a code no class carries
      if (/\(`@idemq\/[a-z]+`\)/.test(classColumn)) continue; // an adapter's own class
      named.add(name);
    }
    const exported = coreErrorClasses();
    expect([...named].sort()).toEqual([...exported].sort());
  });
});
