import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expectReadmeExampleRuns, README_EXAMPLE_PACKAGES } from '@idemq/readme-examples';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { command, succeed } from '../src/command.js';
import { installFresh, packAll } from '../src/packAndInstall.js';
import {
  type PublishablePackage,
  publishablePackages,
  thirdPartyPeers,
} from '../src/publishable.js';
import {
  attw,
  filesUnder,
  missingMapSources,
  publintProblems,
  relativeLinks,
} from '../src/tarballChecks.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const packages = await publishablePackages(root);
// What a TypeScript user adds beside the peers (the published types use Node's and pg's types).
const USER_EXTRAS = ['@types/node', '@types/pg'];

let work: string;
let project: string;
let tarballs: Map<string, string>;
let installLog: string;

// Everything is made anew in a new temporary folder each run: nothing is reused between runs.
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'idemq-pack-install-'));
  project = join(work, 'project');
  tarballs = await packAll(packages, join(work, 'tarballs'));
  const install = await installFresh(
    project,
    [...tarballs.values()],
    [...thirdPartyPeers(packages), ...USER_EXTRAS],
  );
  installLog = `${install.stdout}${install.stderr}`;
});

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

const installed = (pkg: PublishablePackage) => join(project, 'node_modules', pkg.name);

describe('the packed packages in a new npm project', () => {
  it('publishes core, the adapters, the HTTP and gRPC fronts and the conformance suites', () => {
    expect(packages.map((pkg) => pkg.name)).toEqual([
      '@idemq/conformance',
      '@idemq/core',
      '@idemq/grpc',
      '@idemq/http',
      '@idemq/kafka',
      '@idemq/postgres',
      '@idemq/rabbitmq',
      '@idemq/redis',
      '@idemq/sqs',
    ]);
  });

  it('install beside the latest peers with no peer or engine warning, and npm ls is clean', async () => {
    expect(installLog).not.toMatch(/ERESOLVE|EBADENGINE|warn(ing)? peer|overriding peer/i);
    const ls = await command('npm', ['ls', '--all'], project, 60_000);
    expect({ exitCode: ls.exitCode, stderr: ls.stderr }).toEqual({ exitCode: 0, stderr: '' });
  });

  it('share one @idemq/core, so its error classes are the same for every adapter', async () => {
    const query = await succeed('npm', ['query', '#@idemq/core'], project, 60_000);
    const copies = (JSON.parse(query.stdout) as { location: string }[]).map((n) => n.location);
    expect(copies).toEqual(['node_modules/@idemq/core']);
  });
});

describe.each(
  // Conformance is left out: it imports vitest, which a CommonJS test file does not load.
  packages.filter((pkg) => pkg.name !== '@idemq/conformance'),
)('the installed $name', (pkg) => {
  it('loads with require() from CommonJS (the engines floor loads ES modules so)', async () => {
    const script = `const m = require(${JSON.stringify(pkg.name)}); console.log(typeof m);`;
    const run = await command(process.execPath, ['--no-warnings', '-e', script], project, 30_000);
    expect(run).toEqual({ exitCode: 0, stdout: 'object\n', stderr: '' });
  });
});

describe.each(README_EXAMPLE_PACKAGES)('the README example of the installed @idemq/%s', (name) => {
  it('type-checks, runs, exits 0 and prints what the README shows', async () => {
    const readme = join(project, 'node_modules', '@idemq', name, 'README.md');
    await expectReadmeExampleRuns(readme, project);
  });
});

describe.each(packages)('the tarball of $name', (pkg) => {
  it('passes publint (no error, no warning)', async () => {
    expect(await publintProblems(tarballs.get(pkg.name) as string)).toEqual([]);
  });

  it('passes are-the-types-wrong with the ESM-only profile', async () => {
    const { exitCode, report } = await attw(tarballs.get(pkg.name) as string);
    expect(exitCode, report).toBe(0);
  });

  it('holds the MIT LICENSE and a README whose links work on the registry page', async () => {
    const license = await readFile(join(installed(pkg), 'LICENSE'), 'utf8');
    expect(license).toMatch(/^MIT License/);
    expect(relativeLinks(await readFile(join(installed(pkg), 'README.md'), 'utf8'))).toEqual([]);
  });

  it('ships the sources its source maps point at, and no tests', async () => {
    expect(await missingMapSources(installed(pkg))).toEqual([]);
    const tests = (await filesUnder(installed(pkg))).filter((f) => /\.test\.[cm]?[jt]s$/.test(f));
    expect(tests).toEqual([]);
  });

  it('names its repository, homepage and issue tracker, and the Node floor', async () => {
    const manifest = JSON.parse(await readFile(join(installed(pkg), 'package.json'), 'utf8'));
    expect(manifest.repository).toMatchObject({ type: 'git', directory: expect.any(String) });
    expect(manifest.homepage).toMatch(/^https:\/\//);
    expect(manifest.bugs?.url).toMatch(/^https:\/\//);
    const rootManifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
    expect(manifest.engines).toEqual(rootManifest.engines);
  });
});
