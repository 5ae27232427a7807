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
