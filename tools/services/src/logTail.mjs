// @ts-check
// The end of a log file, for error messages when a service does not come up.
import { closeSync, existsSync, fstatSync, openSync, readSync } from 'node:fs';

/**
 * Last `lines` lines of a file (reads at most the last 64 KiB), or a note when there is none.
 * @param {string} file
 * @param {number} [lines]
 */
export function tailFile(file, lines = 40) {
  if (!existsSync(file)) return `(no log file at ${file})`;
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, 64 * 1024);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    const text = buffer.toString('utf8').trimEnd();
    if (text.length === 0) return `(log file ${file} is empty)`;
    return text.split('\n').slice(-lines).join('\n');
  } finally {
    closeSync(fd);
  }
}

/**
 * Indents a multi-line block for inclusion in an error message.
 * @param {string} title
 * @param {string} text
 */
export function formatBlock(title, text) {
  return `${title}\n${text
    .split('\n')
    .map((line) => `    | ${line}`)
    .join('\n')}`;
}
