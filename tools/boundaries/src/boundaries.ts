import type { Dirent } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';

const CORE = '@idemq/core';
/** What an adapter may import of core: the application API, the adapter kit, the test helpers. */
const CORE_ENTRY_POINTS = new Set([CORE, `${CORE}/adapter`, `${CORE}/testing`]);

interface Manifest {
  name: string;
  private?: boolean;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

interface WorkspacePackage {
  manifest: Manifest;
  dir: string;
}

/**
 * Every rule the published packages break, one line each, in the workspace at `root`:
 * - `@idemq/core` has no dependencies and its sources import only Node built-ins;
 * - every other published package depends on and imports no published package but core, and
 *   reaches core only through its entry points (never `@idemq/core/src/…` or `…/dist/…`).
 */
export async function boundaryViolations(root: string): Promise<string[]> {
  const published = await publishedPackages(root);
  const names = new Set(published.map((pkg) => pkg.manifest.name));
  const violations: string[] = [];
  for (const { manifest, dir } of published) {
    const declared = {
      ...manifest.dependencies,
      ...manifest.peerDependencies,
    };
    const isCore = manifest.name === CORE;
    for (const dependency of Object.keys(declared)) {
      if (isCore) violations.push(`${manifest.name} depends on ${dependency}`);
      else if (names.has(dependency) && dependency !== CORE)
        violations.push(`${manifest.name} depends on ${dependency}, another adapter`);
    }
    for (const file of await sourceFiles(join(dir, 'src'))) {
      const where = relative(root, file);
      for (const specifier of importsOf(await readFile(file, 'utf8'))) {
        const problem = isCore
          ? coreImportProblem(specifier)
          : adapterImportProblem(specifier, names);
        if (problem) violations.push(`${where} imports '${specifier}': ${problem}`);
      }
    }
  }
  return violations;
}

function coreImportProblem(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('node:')) return undefined;
  return 'core imports only Node built-ins and its own modules';
}

function adapterImportProblem(specifier: string, published: Set<string>): string | undefined {
  if (!specifier.startsWith('@idemq/')) return undefined;
  if (CORE_ENTRY_POINTS.has(specifier)) return undefined;
  if (specifier.startsWith(`${CORE}/`)) return 'reach core through its entry points';
  const name = specifier.split('/').slice(0, 2).join('/');
  return published.has(name) ? 'an adapter never imports another adapter' : undefined;
}

/**
 * The module specifiers of every static import, export-from and dynamic import in `source`,
 * outside comments (a TSDoc `@example` may show imports a user writes).
 */
export function importsOf(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const found: string[] = [];
  const pattern =
    /\b(?:import|export)\s[^'";]*?\bfrom\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)|\bimport\s+['"]([^'"]+)['"]/g;
  for (const match of code.matchAll(pattern)) {
    const specifier = match[1] ?? match[2] ?? match[3];
    if (specifier) found.push(specifier);
  }
  return found;
}

/** camelCase, then dotted kinds (`.test`, `.int.test`, `.quorum.int.test`, `.d`, `.config`). */
const FILE_NAME = /^[a-z][a-zA-Z0-9]*(\.[a-z][a-zA-Z0-9]*)*\.(?:ts|mts|js|mjs)$/;
/** Where the workspace keeps code, below each package folder, and at the root. */
const CODE_FOLDERS = ['src', 'test', 'bin'];

/** Every code file of the workspace at `root` whose name is not camelCase (CONTRIBUTING.md). */
export async function fileNameViolations(root: string): Promise<string[]> {
  const folders = [join(root, 'scripts')];
  for (const group of ['packages', 'apps', 'tools']) {
    for (const entry of await entriesOf(join(root, group))) {
      if (!entry.isDirectory()) continue;
      for (const folder of CODE_FOLDERS) folders.push(join(root, group, entry.name, folder));
    }
  }
  const violations: string[] = [];
  for (const folder of folders) {
    for (const entry of await entriesOf(folder, true)) {
      if (!entry.isFile() || !/\.(?:ts|mts|js|mjs)$/.test(entry.name)) continue;
      if (entry.parentPath.split(sep).includes('node_modules')) continue;
      if (!FILE_NAME.test(entry.name))
        violations.push(relative(root, join(entry.parentPath, entry.name)));
    }
  }
  return violations.sort();
}

/** A folder's entries; none when it does not exist. */
async function entriesOf(dir: string, recursive = false): Promise<Dirent[]> {
  try {
    return await readdir(dir, { withFileTypes: true, recursive });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

async function publishedPackages(root: string): Promise<WorkspacePackage[]> {
  const found: WorkspacePackage[] = [];
  for (const entry of await readdir(join(root, 'packages'), { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const dir = join(root, 'packages', entry.name);
    const manifest = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as Manifest;
    if (manifest.private !== true) found.push({ manifest, dir });
  }
  return found;
}

/** The published sources of a package: tests beside them are not shipped and may import more. */
async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter(
      (entry) =>
        entry.isFile() && /\.(?:ts|mts|js|mjs)$/.test(entry.name) && !/\.test\./.test(entry.name),
    )
    .map((entry) => join(entry.parentPath, entry.name));
}
