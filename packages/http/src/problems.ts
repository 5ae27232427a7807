/** The problem types the HTTP front answers with, each documented in docs/errors.md. */
export const ProblemTypes = Object.freeze({
  'key-missing': { status: 400, title: 'Idempotency key missing' },
  'key-malformed': { status: 400, title: 'Idempotency key malformed' },
  'key-reuse': { status: 422, title: 'Idempotency key reused for another request' },
  'in-progress': { status: 409, title: 'Request with this idempotency key in progress' },
  'store-unavailable': { status: 503, title: 'Idempotency store unavailable' },
  'store-rejected': { status: 500, title: 'Idempotency store refused the record' },
  'handler-failed': { status: 500, title: 'Route failed' },
});

export type ProblemSlug = keyof typeof ProblemTypes;

const DOCS = 'https://github.com/idemq/idemq/blob/main/docs/errors.md';

/** The stable `type` URI of a problem: an anchor of docs/errors.md. */
export function problemTypeUri(slug: ProblemSlug): string {
  return `${DOCS}#http-${slug}`;
}

/** An RFC 9457 problem details answer (`application/problem+json`): status, headers, body. */
export function problemParts(
  slug: ProblemSlug,
  detail: string,
  headers: Readonly<Record<string, string>> = {},
): { status: number; headers: Record<string, string>; body: string } {
  const { status, title } = ProblemTypes[slug];
  return {
    status,
    headers: { ...headers, 'content-type': 'application/problem+json' },
    body: JSON.stringify({ type: problemTypeUri(slug), title, status, detail }),
  };
}

/** An RFC 9457 problem details response (`application/problem+json`). */
export function problemResponse(
  slug: ProblemSlug,
  detail: string,
  headers: Readonly<Record<string, string>> = {},
): Response {
  const { status, headers: head, body } = problemParts(slug, detail, headers);
  return new Response(body, { status, headers: head });
}

/** `Retry-After` in whole seconds, at least 1, from a delay in milliseconds. */
export function retryAfterSeconds(delayMs: number): string {
  return String(Math.max(1, Math.ceil(delayMs / 1000)));
}
