import { readFile } from 'node:fs/promises';
import { expect } from 'vitest';
import { readmeExample } from './readmeExample.js';
import { runExample } from './runExample.js';

/** The packages whose README must hold an example that runs as shown. */
export const README_EXAMPLE_PACKAGES = [
  'core',
  'redis',
  'rabbitmq',
  'kafka',
  'sqs',
  'http',
  'grpc',
] as const;

/**
 * Asserts that the `## Example` of `readmeFile` type-checks and runs as a module of the project
 * in `projectDir`, exits 0, writes nothing to stderr and prints exactly the output the README shows.
 */
export async function expectReadmeExampleRuns(
  readmeFile: string,
  projectDir: string,
  timeoutMs = 120_000,
): Promise<void> {
  const example = readmeExample(await readFile(readmeFile, 'utf8'));
  expect(example, 'README has a "## Example" section').toBeDefined();
  const { code, expectedOutput } = example as NonNullable<typeof example>;
  expect(expectedOutput, 'the example is followed by the output it prints').toBeDefined();
  const run = await runExample(projectDir, code, timeoutMs);
  expect(run.typeErrors).toEqual([]);
  expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: '' });
  expect(run.stdout.trimEnd().split('\n')).toEqual(expectedOutput);
}
