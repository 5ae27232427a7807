/**
 * The record scope of a request: the configured scope, the route (HTTP route, gRPC method path)
 * and, when given, the principal, each variable part preceded by its length so that no two
 * (route, principal) pairs give one scope (`http:7:/orders`, `http:7:/orders:6:acme-1`).
 */
export function requestScope(base: string, route: string, principal: string | undefined): string {
  const routed = `${base}:${route.length}:${route}`;
  return principal === undefined ? routed : `${routed}:${principal.length}:${principal}`;
}
