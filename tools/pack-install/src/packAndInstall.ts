import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type CommandResult, succeed } from './command.js';
import type { PublishablePackage } from './publishable.js';

const MINUTE = 60_000;

/** Packs each package with `pnpm pack` into `destination`; the tarballs' paths, by package name. */
export async function packAll(
  packages: readonly PublishablePackage[],
  destination: string,
): Promise<Map<string, string>> {
  await mkdir(destination, { recursive: true });
  const tarballs = new Map<string, string>();
  for (const pkg of packages) {
    const before = new Set(await readdir(destination));
    await succeed('pnpm', ['pack', '--pack-destination', destination], pkg.dir, MINUTE);
    const made = (await readdir(destination)).filter((file) => !before.has(file));
    if (made.length !== 1) throw new Error(`pnpm pack in ${pkg.dir} made ${made.join(', ')}`);
    tarballs.set(pkg.name, join(destination, made[0] as string));
  }
  return tarballs;
}

/**
 * Creates an empty ESM project in `projectDir` and installs the tarballs there with npm, with
 * `extra` given by name only, as a user types them: npm picks each one's latest version, and
 * refuses when that is outside a peer range.
 */
export async function installFresh(
  projectDir: string,
  tarballs: readonly string[],
  extra: readonly string[],
): Promise<CommandResult> {
  await mkdir(projectDir, { recursive: true });
  await writeFile(
    join(projectDir, 'package.json'),
    `${JSON.stringify({ name: 'fresh-project', private: true, type: 'module' }, null, 2)}\n`,
  );
  return succeed(
    'npm',
    ['install', '--no-audit', '--no-fund', ...tarballs, ...extra],
    projectDir,
    // A slow registry once took over 3 minutes to resolve the peers' trees.
    8 * MINUTE,
  );
}
