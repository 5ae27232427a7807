/** One row of cells, already formatted. */
export type Cells = string[];

/**
 * Lays out a table; `numbers` right-aligns every column but the first. The store and the
 * transport reports are written once against this and rendered as Markdown or plain text.
 */
export type TableFormat = (header: Cells, rows: Cells[], numbers?: boolean) => string;

/**
 * A Markdown table laid out the way Biome formats one (cells padded to the column width, the
 * delimiter row at least 3 wide, numbers right-aligned), so a generated document passes
 * `biome check` as written.
 */
export const markdownTable: TableFormat = (header, rows, numbers = true) => {
  const widths = header.map((h, i) =>
    Math.max(3, h.length, ...rows.map((r) => (r[i] ?? '').length)),
  );
  const right = (i: number) => numbers && i > 0;
  const line = (cells: Cells) =>
    `| ${cells
      .map((cell, i) => (right(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join(' | ')} |`;
  const rule = widths.map((w, i) => (right(i) ? `${'-'.repeat(w - 1)}:` : '-'.repeat(w)));
  return [line(header), `| ${rule.join(' | ')} |`, ...rows.map(line)].join('\n');
};

/** The same table for a terminal: no pipes, Markdown emphasis dropped. */
export const textTable: TableFormat = (header, rows, numbers = true) => {
  const plain = (cell: string) => cell.replace(/\*\*/g, '');
  const widths = header.map((h, i) =>
    Math.max(h.length, ...rows.map((r) => plain(r[i] ?? '').length)),
  );
  const line = (cells: Cells) =>
    cells
      .map((cell, i) => {
        const text = plain(cell);
        const width = widths[i] ?? 0;
        return numbers && i > 0 ? text.padStart(width) : text.padEnd(width);
      })
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
};

/** A report written once against `TableFormat`, rendered as Markdown (docs) and plain text (terminal). */
export function inBothFormats<R>(
  render: (report: R, command: string, table: TableFormat) => string,
) {
  return {
    markdown: (report: R, command: string) => render(report, command, markdownTable),
    text: (report: R, command: string) => render(report, command, textTable),
  };
}

/** `value` with `digits` decimals; `n/a` for NaN and infinities. */
export function fixed(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

/** A goal of an issue, judged from one run's figures. */
export interface Goal {
  name: string;
  target: string;
  actual: string;
  met: boolean;
}

/** The "Goals:" part of a report (nothing when there are none); a missed goal is bold. */
export function goalsSection(goals: readonly Goal[], table: TableFormat): string[] {
  if (goals.length === 0) return [];
  return [
    '',
    'Goals:',
    '',
    table(
      ['goal', 'target', 'this run', 'met'],
      goals.map((g) => [g.name, g.target, g.actual, g.met ? 'yes' : '**no**']),
      false,
    ),
  ];
}

/** A titled bullet list (nothing when `items` is empty). */
export function listSection(title: string, items: readonly string[]): string[] {
  return items.length === 0 ? [] : ['', title, '', ...items.map((item) => `- ${item}`)];
}

/** Markers around one generated block of a Markdown document. */
export interface DocumentMarkers {
  begin: string;
  end: string;
}

/** Replaces the block of `document` between `markers` with `generated`; the rest is kept. */
export function spliceBlock(document: string, markers: DocumentMarkers, generated: string): string {
  const begin = document.indexOf(markers.begin);
  const end = document.indexOf(markers.end, begin);
  if (begin < 0 || end < begin) {
    throw new Error(`the document has no ${markers.begin} … ${markers.end} block to fill`);
  }
  return `${document.slice(0, begin + markers.begin.length)}\n\n${generated}\n\n${document.slice(end)}`;
}
