import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ErrorCodes } from './codes.js';

const docsPath = new URL('../../../../docs/errors.md', import.meta.url);

describe('error codes', () => {
  const documented = [
    ...readFileSync(docsPath, 'utf8').matchAll(/^\|\s*`(IDEMQ_ERR_[A-Z_]+)`\s*\|/gm),
  ].map((match) => match[1]);
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
});
