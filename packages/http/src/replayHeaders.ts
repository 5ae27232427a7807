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

/** The allow-listed headers of a response, in order; each `set-cookie` line on its own. */
export function replayableHeaders(
  headers: Headers,
  allowList: ReadonlySet<string>,
): [string, string][] {
  const kept = allowedPairs(headers, allowList);
  if (allowList.has('set-cookie')) {
    for (const cookie of headers.getSetCookie()) kept.push(['set-cookie', cookie]);
  }
  return kept;
}

/**
 * The allow-listed pairs, names in lower case, in order; `set-cookie` is left out (a caller that
 * allows it adds its lines one by one).
 */
export function allowedPairs(
  pairs: Iterable<[string, string]>,
  allowList: ReadonlySet<string>,
): [string, string][] {
  const kept: [string, string][] = [];
  for (const [name, value] of pairs) {
    const lower = name.toLowerCase();
    if (lower !== 'set-cookie' && allowList.has(lower)) kept.push([lower, value]);
  }
  return kept;
}
