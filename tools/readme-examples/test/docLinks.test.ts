import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { anchorsOf, brokenReferences, headingAnchor, missingDocs } from '../src/docLinks.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** Files under `dir` (relative to the repository root) whose names pass `keep`. */
function filesUnder(dir: string, keep: (name: string) => boolean): string[] {
  const found: string[] = [];
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === 'dist') continue;
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (keep(entry.name)) found.push(relative(root, path));
    }
  };
  walk(join(root, dir));
  return found;
}

const documents = [
  'README.md',
  'CONTRIBUTING.md',
  ...filesUnder('docs', (name) => name.endsWith('.md')),
  ...['packages', 'apps', 'tools'].flatMap((dir) =>
    readdirSync(join(root, dir)).map((name) => `${dir}/${name}/README.md`),
  ),
].filter((path) => {
  try {
    readFileSync(join(root, path));
    return true;
  } catch {
    return false;
  }
});

describe('links in the docs', () => {
  it('every relative link, heading anchor and repository path in the docs exists', () => {
    expect(documents).toContain('docs/design.md');
    expect(brokenReferences(root, documents)).toEqual([]);
  });

  it('every docs/*.md a source file names exists', () => {
    const sources = ['packages', 'apps', 'tools'].flatMap((dir) =>
      filesUnder(dir, (name) => /\.(ts|mjs)$/.test(name)),
    );
    expect(sources.length).toBeGreaterThan(100);
    const missing = sources.flatMap((file) =>
      missingDocs(root, readFileSync(join(root, file), 'utf8')).map((doc) => `${file}: ${doc}`),
    );
    expect(missing).toEqual([]);
  });
});

describe('brokenReferences', () => {
  // Built at run time, so this file does not itself name docs that do not exist.
  const page = ['docs', 'page.md'].join('/');
  const scratch = mkdtempSync(join(tmpdir(), 'idemq-doc-links-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  mkdirSync(join(scratch, 'docs'));
  mkdirSync(join(scratch, 'packages/x/src'), { recursive: true });
  writeFileSync(join(scratch, 'packages/x/src/here.ts'), '');
  writeFileSync(join(scratch, 'docs', 'other.md'), '# Other\n\n## The `x` options: a list\n');
  const write = (text: string) => {
    writeFileSync(join(scratch, page), text);
    return brokenReferences(scratch, [page]);
  };

  it('accepts links to files and headings that exist, and outside links', () => {
    const ok = [
      '# Page',
      '## Section two',
      '[a](other.md) [b](other.md#the-x-options-a-list) [c](#section-two) [d](https://x.org/y)',
      '[e](../packages/x/src/here.ts) `packages/x/src/here.ts` `packages/<name>/src/index.ts`',
      '```md',
      '[inside a fence](nowhere.md)',
      '```',
    ];
    expect(write(ok.join('\n'))).toEqual([]);
  });

  it('reports a missing file, a missing heading and a missing repository path', () => {
    const bad = '[a](gone.md) [b](other.md#no-such) [c](#nothing) `packages/x/src/gone.ts`';
    expect(write(bad)).toEqual([
      { document: page, target: 'gone.md', why: 'missing file' },
      { document: page, target: 'other.md#no-such', why: 'missing heading' },
      { document: page, target: '#nothing', why: 'missing heading' },
      { document: page, target: 'packages/x/src/gone.ts', why: 'missing path' },
    ]);
  });

  it('names docs that do not exist', () => {
    const [other, gone] = [['docs', 'other.md'].join('/'), ['docs', 'gone.md'].join('/')];
    expect(missingDocs(scratch, `// see ${other} and ${gone}`)).toEqual([gone]);
  });

  it('spells anchors as GitHub does', () => {
    expect(headingAnchor('What is measured: the store')).toBe('what-is-measured-the-store');
    expect(headingAnchor('1. Packages')).toBe('1-packages');
    expect([...anchorsOf('# A\n## B\n## B\n```\n## not a heading\n```')]).toEqual([
      'a',
      'b',
      'b-1',
    ]);
  });
});
