import { readFile } from 'node:fs/promises';
import { expect } from 'vitest';
import { readmeExamples } from './readmeExample.js';
import { runExample } from './runExample.js';

/** The packages whose README must hold an example that runs as shown. */
export const README_EXAMPLE_PACKAGES = [
  'core',
  'redis',
  'rabbitmq',
  'kafka',
  'sqs',
  'postgres',
  'http',
  'grpc',
] as const;

/**
 * Asserts that every `## Example…` section of `readmeFile` type-checks and runs as a module of
 * the project in `projectDir`, exits 0, writes nothing to stderr and prints exactly the output
 * the README shows.
 */
export async function expectReadmeExampleRuns(
  readmeFile: string,
  projectDir: string,
  timeoutMs = 120_000,
): Promise<void> {
  const examples = readmeExamples(await readFile(readmeFile, 'utf8'));
  expect(examples.length, 'README has a "## Example" section').toBeGreaterThan(0);
  for (const [i, { code, expectedOutput }] of examples.entries()) {
    const which = `example ${i + 1} of ${examples.length}`;
    expect(expectedOutput, `${which} is followed by the output it prints`).toBeDefined();
    const run = await runExample(projectDir, code, timeoutMs);
    expect(run.typeErrors, which).toEqual([]);
    expect({ exitCode: run.exitCode, stderr: run.stderr }, which).toEqual({
      exitCode: 0,
      stderr: '',
    });
    expect(run.stdout.trimEnd().split('\n'), which).toEqual(expectedOutput);
  }
}
