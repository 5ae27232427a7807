/**
 * The framework's route pattern for a Request the binding built, so that the centre's `route`
 * option can scope keys by pattern (`/orders/:id`) rather than by the concrete path.
 */
export interface RouteTable {
  /** Remembers the route pattern of a Request the binding built. */
  remember(request: Request, route: string): void;
  /** The `route` option for the centre: the remembered pattern, else the URL pathname. */
  routeOf(request: Request): string;
}

export function createRouteTable(): RouteTable {
  // Keyed by the Request object, so nothing outlives the request.
  const patterns = new WeakMap<Request, string>();
  return {
    remember(request, route) {
      patterns.set(request, route);
    },
    routeOf(request) {
      return patterns.get(request) ?? new URL(request.url).pathname;
    },
  };
}
