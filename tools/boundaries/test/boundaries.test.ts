import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { boundaryViolations, fileNameViolations, importsOf } from '../src/boundaries.js';

const workspaceRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

describe('the workspace', () => {
  it('keeps its package boundaries', async () => {
    expect(await boundaryViolations(workspaceRoot)).toEqual([]);
  });

  it('names every code file in camelCase', async () => {
    expect(await fileNameViolations(workspaceRoot)).toEqual([]);
  });
});

describe('boundaryViolations (negative controls)', () => {
  let root: string;
  afterEach(() => rm(root, { recursive: true, force: true }));

  /** A workspace of `files` (path → text) under a new temporary folder. */
  async function workspace(files: Record<string, string>): Promise<string> {
    root = await mkdtemp(join(tmpdir(), 'idemq-boundaries-'));
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), text);
    }
    return root;
  }

  const manifest = (name: string, extra: object = {}) => JSON.stringify({ name, ...extra });
  const sound = {
    'packages/core/package.json': manifest('@idemq/core'),
    'packages/core/src/index.ts': "import { hash } from 'node:crypto';\nexport * from './a.js';",
    'packages/redis/package.json': manifest('@idemq/redis', {
      peerDependencies: { '@idemq/core': '^0.1.0', ioredis: '^5' },
    }),
    'packages/redis/src/store.ts':
      "import type { Store } from '@idemq/core';\nimport { OptionsCheck } from '@idemq/core/adapter';\nimport Redis from 'ioredis';",
    'packages/kafka/package.json': manifest('@idemq/kafka'),
    'packages/kafka/src/kafka.ts': "export { x } from './x.js';",
    'packages/kafka/src/kafka.test.ts': "import { redisStore } from '@idemq/redis';",
    'packages/bench/package.json': manifest('@idemq/bench', { private: true }),
    'packages/bench/src/bench.ts': "import { redisStore } from '@idemq/redis';",
  };

  it('finds nothing in a sound workspace (a private package may import every adapter)', async () => {
    expect(await boundaryViolations(await workspace(sound))).toEqual([]);
  });

  it('catches an adapter importing another adapter, statically or dynamically', async () => {
    const violations = await boundaryViolations(
      await workspace({
        ...sound,
        'packages/kafka/src/kafka.ts':
          "import { redisStore } from '@idemq/redis';\nconst m = await import('@idemq/redis/extra');",
      }),
    );
    expect(violations).toEqual([
      "packages/kafka/src/kafka.ts imports '@idemq/redis': an adapter never imports another adapter",
      "packages/kafka/src/kafka.ts imports '@idemq/redis/extra': an adapter never imports another adapter",
    ]);
  });

  it('catches an adapter depending on another adapter in its manifest', async () => {
    const violations = await boundaryViolations(
      await workspace({
        ...sound,
        'packages/kafka/package.json': manifest('@idemq/kafka', {
          dependencies: { '@idemq/redis': '^0.1.0' },
        }),
      }),
    );
    expect(violations).toEqual(['@idemq/kafka depends on @idemq/redis, another adapter']);
  });

  it("catches an adapter reaching into core's files", async () => {
    const violations = await boundaryViolations(
      await workspace({
        ...sound,
        'packages/kafka/src/kafka.ts': "import { x } from '@idemq/core/src/engine/decide.js';",
      }),
    );
    expect(violations).toEqual([
      "packages/kafka/src/kafka.ts imports '@idemq/core/src/engine/decide.js': reach core through its entry points",
    ]);
  });

  it('catches core importing or depending on anything but Node built-ins', async () => {
    const violations = await boundaryViolations(
      await workspace({
        ...sound,
        'packages/core/package.json': manifest('@idemq/core', { dependencies: { ms: '^2' } }),
        'packages/core/src/index.ts': "import ms from 'ms';\nexport * from './a.js';",
      }),
    );
    expect(violations).toEqual([
      '@idemq/core depends on ms',
      "packages/core/src/index.ts imports 'ms': core imports only Node built-ins and its own modules",
    ]);
  });
});

describe('fileNameViolations (negative control)', () => {
  let root: string;
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('passes camelCase and dotted kinds, and names PascalCase and kebab-case files', async () => {
    root = await mkdtemp(join(tmpdir(), 'idemq-file-names-'));
    const files = [
      'packages/core/src/store/memoryStore.ts',
      'packages/core/src/store/memoryStore.property.test.ts',
      'packages/core/src/store/Store.ts',
      'packages/rabbitmq/test/conformance.quorum.int.test.ts',
      'packages/rabbitmq/node_modules/x/Foo.js',
      'tools/services/src/tcp-proxy.mjs',
      'scripts/testSummary.mjs',
    ];
    for (const file of files) {
      await mkdir(dirname(join(root, file)), { recursive: true });
      await writeFile(join(root, file), '');
    }
    expect(await fileNameViolations(root)).toEqual([
      'packages/core/src/store/Store.ts',
      'tools/services/src/tcp-proxy.mjs',
    ]);
  });
});

describe('importsOf', () => {
  it('reads multi-line, type-only, re-export, side-effect and dynamic imports', () => {
    const source = [
      'import {\n  a,\n  type B,\n} from "one";',
      "import type { C } from 'two';",
      "export { d } from 'three';",
      "import 'four';",
      "const five = await import('five');",
      "const text = 'not an import from here';",
      "/**\n * @example\n * import { kafka } from '@idemq/kafka';\n */",
      "// import { sqs } from '@idemq/sqs';",
    ].join('\n');
    expect(importsOf(source)).toEqual(['one', 'two', 'three', 'four', 'five']);
  });
});
