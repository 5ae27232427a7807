import { readdir, readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { command } from './command.js';

/** publint's errors and warnings for a tarball, formatted (its suggestions are left out). */
export async function publintProblems(tarball: string): Promise<string[]> {
  const bytes = await readFile(tarball);
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const { messages, pkg } = await publint({ pack: { tarball: buffer }, level: 'warning' });
  return messages.map(
    (message) => `${message.type}: ${formatMessage(message, pkg) ?? message.code}`,
  );
}

const require = createRequire(import.meta.url);

/** are-the-types-wrong on a tarball with the ESM-only profile: its exit code and report. */
export async function attw(tarball: string): Promise<{ exitCode: number; report: string }> {
  const manifest = require.resolve('@arethetypeswrong/cli/package.json');
  const bin = join(dirname(manifest), 'dist', 'index.js');
  const run = await command(
    process.execPath,
    [bin, tarball, '--profile', 'esm-only', '--format', 'ascii'],
    dirname(tarball),
    60_000,
  );
  return { exitCode: run.exitCode, report: `${run.stdout}${run.stderr}` };
}

/** Markdown links in `markdown` that do not work on a registry page: relative ones. */
export function relativeLinks(markdown: string): string[] {
  const targets = [...markdown.matchAll(/\]\(([^)\s]+)(?:\s[^)]*)?\)/g)].map((m) => m[1] as string);
  return targets.filter((target) => !/^(https?:|mailto:|#)/.test(target));
}

/** Every `sources` entry of every `.map` file under `dir` that does not exist beside it. */
export async function missingMapSources(dir: string): Promise<string[]> {
  const missing: string[] = [];
  for (const file of await filesUnder(dir)) {
    if (!file.endsWith('.map')) continue;
    const map = JSON.parse(await readFile(file, 'utf8')) as { sources?: string[] };
    for (const source of map.sources ?? []) {
      const target = join(dirname(file), source);
      if (!(await exists(target))) missing.push(`${relative(dir, file)} → ${source}`);
    }
  }
  return missing;
}

/** Every file under `dir`, recursively. */
export async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
