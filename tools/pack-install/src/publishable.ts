import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** A workspace package that is published (not `private`). */
export interface PublishablePackage {
  name: string;
  dir: string;
  peerDependencies: Record<string, string>;
}

/** Every package under `packages/` of the workspace at `root` that is not private. */
export async function publishablePackages(root: string): Promise<PublishablePackage[]> {
  const found: PublishablePackage[] = [];
  for (const entry of await readdir(join(root, 'packages'), { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const dir = join(root, 'packages', entry.name);
    const manifest = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as {
      name: string;
      private?: boolean;
      peerDependencies?: Record<string, string>;
    };
    if (manifest.private === true) continue;
    found.push({ name: manifest.name, dir, peerDependencies: manifest.peerDependencies ?? {} });
  }
  return found.sort((a, b) => a.name.localeCompare(b.name));
}

/** The peers a user installs beside the packages: every peer that is not one of them. */
export function thirdPartyPeers(packages: readonly PublishablePackage[]): string[] {
  const ours = new Set(packages.map((pkg) => pkg.name));
  const peers = new Set(packages.flatMap((pkg) => Object.keys(pkg.peerDependencies)));
  return [...peers].filter((name) => !ours.has(name)).sort();
}
