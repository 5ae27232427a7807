/**
 * Response headers a replay repeats by default: what describes the representation and where it
 * lives. Never `set-cookie`, `authorization` or `www-authenticate` unless the user lists them.
 */
export const DEFAULT_REPLAY_HEADERS: readonly string[] = Object.freeze([
  'content-type',
  'content-language',
  'content-location',
  'location',
  'etag',
  'last-modified',
  'cache-control',
  'expires',
  'vary',
  'link',
  'retry-after',
]);

/** The allow-list in lower case: the defaults plus the user's additions. */
export function replayAllowList(extra: readonly string[] = []): ReadonlySet<string> {
  return new Set([...DEFAULT_REPLAY_HEADERS, ...extra.map((name) => name.toLowerCase())]);
}

/**
 * The allow-listed header lines of a response, names in lower case, in order. Each `set-cookie`
 * line stays a pair of its own: node keeps them apart, and WHATWG `Headers` yields them apart.
 */
export function replayableHeaders(
  lines: Iterable<[string, string]>,
  allowList: ReadonlySet<string>,
): [string, string][] {
  const kept: [string, string][] = [];
  for (const [name, value] of lines) {
    const lower = name.toLowerCase();
    if (allowList.has(lower)) kept.push([lower, value]);
  }
  return kept;
}
