import { Metadata } from '@grpc/grpc-js';
import type { ResponseLine } from '@idemq/core/adapter';

const BINARY_SUFFIX = '-bin';

/** Metadata as name/value lines; binary values (`-bin` names) as base64. */
export function metadataLines(metadata: Metadata | null | undefined): [string, string][] {
  const lines: [string, string][] = [];
  if (!metadata) return lines;
  for (const [name, values] of Object.entries(metadata.toJSON())) {
    for (const value of values) {
      lines.push([name, typeof value === 'string' ? value : Buffer.from(value).toString('base64')]);
    }
  }
  return lines;
}

/** Lines back as metadata, base64 values of `-bin` names decoded. */
export function metadataOf(lines: readonly ResponseLine[] | undefined): Metadata {
  const metadata = new Metadata();
  for (const [name, value] of lines ?? []) {
    metadata.add(name, name.endsWith(BINARY_SUFFIX) ? Buffer.from(value, 'base64') : value);
  }
  return metadata;
}
