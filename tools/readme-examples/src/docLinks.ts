import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

/** A reference in a document that leads nowhere. */
export interface BrokenReference {
  /** The document, relative to the repository root. */
  document: string;
  /** The link target or path as written. */
  target: string;
  why: 'missing file' | 'missing heading' | 'missing path';
}

const FENCED_BLOCK = /^```[\s\S]*?^```/gm;
const LINK = /\[[^\]]*\]\(([^)\s]+)\)/g;
/** Repository paths written in code spans: `packages/redis/src/scripts.ts`. */
const CODE_SPAN_PATH = /`((?:packages|apps|tools|docs|scripts)\/[\w./-]+\.\w+)`/g;
/** Placeholders in code-span paths (`packages/<name>/…`, globs), not real paths. */
const PLACEHOLDER = /[<>*…]/;

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/[^\p{L}\p{N}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Every heading anchor of a Markdown document (repeated headings get `-1`, `-2`, …). */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of markdown.replace(FENCED_BLOCK, '').split('\n')) {
    const heading = /^#{1,6} (.*)$/.exec(line);
    if (!heading?.[1]) continue;
    const anchor = headingAnchor(heading[1]);
    const count = seen.get(anchor) ?? 0;
    seen.set(anchor, count + 1);
    anchors.add(count === 0 ? anchor : `${anchor}-${count}`);
  }
  return anchors;
}

/**
 * The links of `documents` (paths relative to `root`) that point at a file or heading that does
 * not exist, and the repository paths they name in code spans that do not exist.
 */
export function brokenReferences(root: string, documents: readonly string[]): BrokenReference[] {
  const broken: BrokenReference[] = [];
  for (const document of documents) {
    const markdown = readFileSync(join(root, document), 'utf8');
    const prose = markdown.replace(FENCED_BLOCK, '');
    for (const [, target = ''] of prose.matchAll(LINK)) {
      if (/^[a-z][\w+.-]*:/i.test(target)) continue; // https:, mailto:
      const [path = '', anchor] = target.split('#');
      const file = path === '' ? document : normalize(join(dirname(document), path));
      if (!existsSync(join(root, file))) {
        broken.push({ document, target, why: 'missing file' });
      } else if (anchor && file.endsWith('.md')) {
        if (!anchorsOf(readFileSync(join(root, file), 'utf8')).has(anchor)) {
          broken.push({ document, target, why: 'missing heading' });
        }
      }
    }
    for (const [, path = ''] of prose.matchAll(CODE_SPAN_PATH)) {
      if (!PLACEHOLDER.test(path) && !existsSync(join(root, path))) {
        broken.push({ document, target: path, why: 'missing path' });
      }
    }
  }
  return broken;
}

/** The `docs/*.md` files that `text` (a source file, a document) names and that do not exist. */
export function missingDocs(root: string, text: string): string[] {
  const named = new Set(text.match(/\bdocs\/[\w.-]+\.md\b/g) ?? []);
  return [...named].filter((doc) => !existsSync(join(root, doc)));
}
