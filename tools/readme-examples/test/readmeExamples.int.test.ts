import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';
import { expectReadmeExampleRuns, README_EXAMPLE_PACKAGES } from '../src/index.js';

describe.each(README_EXAMPLE_PACKAGES)('the README example of @idemq/%s', (name) => {
  const dir = fileURLToPath(new URL(`../../../packages/${name}/`, import.meta.url));

  it('type-checks, runs, exits 0 and prints what the README shows', async () => {
    await expectReadmeExampleRuns(`${dir}README.md`, dir);
  });
});
