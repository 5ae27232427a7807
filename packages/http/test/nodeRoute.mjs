// Test glue: the suite's fetch-style route as a route of @idemq/http/node. Plain JavaScript, so
// that the conformance harness and its forked server process mount it the same way.

/**
 * Wraps `route` (WHATWG Request in, Response out) as a node route: it gets a Request of the
 * node request and the body the binding read, and its Response becomes a plain answer whose body
 * streams chunk by chunk.
 */
export function nodeRoute(route) {
  return async (req, ctx) => {
    const response = await route(await webRequest(req, ctx), ctx);
    const headers = {};
    for (const [name, value] of response.headers) {
      if (name !== 'set-cookie') headers[name] = value;
    }
    const cookies = response.headers.getSetCookie();
    if (cookies.length > 0) headers['set-cookie'] = cookies;
    return { status: response.status, headers, body: response.body };
  };
}

/** The Request a node request stands for, with the body as the binding read it. */
export async function webRequest(req, ctx) {
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  return new Request(urlOf(req), {
    method: req.method,
    headers: headersOf(req),
    body: hasBody ? await ctx.body() : null,
  });
}

/**
 * The suite's options with its Request hooks fed a Request of a node (or Express) request, or
 * of the node request `incoming(request)` finds in a framework's own (Fastify's `request.raw`).
 */
export function incomingOptions(options, incoming = (req) => req) {
  const { principal } = options;
  if (principal === undefined) return options;
  return {
    ...options,
    principal: (request) => {
      const req = incoming(request);
      return principal(new Request(urlOf(req), { headers: headersOf(req) }));
    },
  };
}

/** `incomingOptions` for the node binding, which does not log the routes that throw on purpose. */
export function nodeOptions(options) {
  return { onError: () => {}, ...incomingOptions(options) };
}

function urlOf(req) {
  return new URL(req.url, `http://${req.headers.host}`);
}

function headersOf(req) {
  const headers = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
  }
  return headers;
}
