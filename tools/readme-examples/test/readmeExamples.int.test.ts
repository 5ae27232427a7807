import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readmeExample } from '../src/readmeExample.js';
import { runExample } from '../src/runExample.js';

/** The packages whose README must hold an example that runs as shown. */
const PACKAGES = ['core', 'redis', 'rabbitmq', 'kafka', 'sqs'];

describe.each(PACKAGES)('the README example of @idemq/%s', (name) => {
  const dir = fileURLToPath(new URL(`../../../packages/${name}/`, import.meta.url));

  it('type-checks, runs, exits 0 and prints what the README shows', async () => {
    const example = readmeExample(await readFile(`${dir}README.md`, 'utf8'));
    expect(example, 'README has a "## Example" section').toBeDefined();
    const { code, expectedOutput } = example as NonNullable<typeof example>;
    expect(expectedOutput, 'the example is followed by the output it prints').toBeDefined();
    const run = await runExample(dir, code, 120_000);
    expect(run.typeErrors).toEqual([]);
    expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: '' });
    expect(run.stdout.trimEnd().split('\n')).toEqual(expectedOutput);
  });
});
