import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';

/** Request headers as Node received them, for a WHATWG Request (HTTP/2 pseudo-headers left out). */
export function requestHeaders(rawHeaders: readonly string[]): Headers {
  const headers = new Headers();
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    const name = rawHeaders[index]!;
    if (name.startsWith(':')) continue;
    headers.append(name, rawHeaders[index + 1]!);
  }
  return headers;
}

/** Response headers a Node/framework response holds (`getHeaders()`), as WHATWG Headers. */
export function responseHeaders(
  nodeHeaders: OutgoingHttpHeaders | IncomingHttpHeaders | Record<string, unknown>,
): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(nodeHeaders)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) {
      for (const item of value) headers.append(name, String(item));
    } else {
      headers.append(name, String(value));
    }
  }
  return headers;
}

/**
 * Node header values for a WHATWG Headers: one string per name, except `set-cookie`, whose
 * values stay separate (joining them with commas would corrupt cookies).
 */
export function nodeHeaderEntries(headers: Headers): Array<[string, string | string[]]> {
  const entries: Array<[string, string | string[]]> = [];
  for (const [name, value] of headers) {
    if (name === 'set-cookie') continue;
    entries.push([name, value]);
  }
  const cookies = headers.getSetCookie();
  if (cookies.length > 0) entries.push(['set-cookie', cookies]);
  return entries;
}

/** Statuses whose responses have no body (a WHATWG Response refuses one). */
export function isNullBodyStatus(status: number): boolean {
  return status === 101 || status === 103 || status === 204 || status === 205 || status === 304;
}
