/** A README's example: its code, and what it prints when the README shows that. */
export interface ReadmeExample {
  /** The first `ts` block after the heading that starts with `## Example`. */
  code: string;
  /** Lines of the plain (or `text`) block right after the code, if there is one. */
  expectedOutput: string[] | undefined;
}

const FENCE = /^```([\w-]*)\s*$/;

/** The example of a README, or undefined when it has no `## Example` section. */
export function readmeExample(markdown: string): ReadmeExample | undefined {
  return readmeExamples(markdown)[0];
}

/** Every example of a README: one per section whose heading starts with `## Example`. */
export function readmeExamples(markdown: string): ReadmeExample[] {
  const lines = markdown.split('\n');
  const examples: ReadmeExample[] = [];
  lines.forEach((line, heading) => {
    if (line.startsWith('## Example')) examples.push(exampleAt(lines, heading));
  });
  return examples;
}

function exampleAt(lines: readonly string[], heading: number): ReadmeExample {
  const code = nextBlock(lines, heading + 1, (lang) => lang === 'ts');
  if (!code) throw new Error(`the "${lines[heading]}" section has no \`\`\`ts block`);
  let after = code.end + 1;
  while (after < lines.length && lines[after]?.trim() === '') after += 1;
  const output = FENCE.exec(lines[after] ?? '');
  const printed =
    output && (output[1] === '' || output[1] === 'text')
      ? nextBlock(lines, after, () => true)
      : undefined;
  return { code: code.body.join('\n'), expectedOutput: printed?.body };
}

/** The fenced block opening at or after `from` whose language `accepts`, up to the next heading. */
function nextBlock(
  lines: readonly string[],
  from: number,
  accepts: (lang: string) => boolean,
): { body: string[]; end: number } | undefined {
  for (let i = from; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.startsWith('## ')) return undefined;
    const open = FENCE.exec(line);
    if (!open) continue;
    const close = lines.findIndex((l, j) => j > i && l.startsWith('```'));
    if (close < 0) throw new Error(`a code block opened on line ${i + 1} is never closed`);
    if (accepts(open[1] ?? '')) return { body: lines.slice(i + 1, close), end: close };
    i = close;
  }
  return undefined;
}
