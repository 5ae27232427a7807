const DELAY_SECONDS = /^\d+$/;

/**
 * The delay a `Retry-After` header value asks for, in milliseconds (RFC 9110 §10.2.3: a number
 * of seconds or an HTTP-date). A date in the past is 0; a value that is neither is `undefined`.
 */
export function parseRetryAfter(
  value: string | null,
  nowMs: number = Date.now(),
): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  if (DELAY_SECONDS.test(text)) return Number(text) * 1000;
  // Only dates with a letter and a colon: Date.parse also takes bare numbers and odd forms.
  if (!/[A-Za-z]/.test(text) || !text.includes(':')) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
