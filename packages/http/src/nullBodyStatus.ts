/** Statuses whose responses have no body (a WHATWG Response refuses one). */
export function isNullBodyStatus(status: number): boolean {
  return status === 101 || status === 103 || status === 204 || status === 205 || status === 304;
}
