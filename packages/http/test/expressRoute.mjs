// Test glue: an Express 5 app with an idempotency middleware in front of a fetch-style route at
// /r. Plain JavaScript, so that the conformance harness and its forked server process (which runs
// without a TypeScript loader) mount the route the same way.
import express from 'express';

const METHODS = ['head', 'get', 'post', 'put', 'patch', 'delete'];

/**
 * An app with `middleware` (the binding's) app-wide and `route` at /r for every method the
 * suite sends: the route gets a WHATWG Request of the Express request and its Response is
 * written to `res`, the body streamed chunk by chunk.
 */
export function expressApp(middleware, route) {
  const app = express();
  app.use(middleware);
  const handler = async (req, res) => {
    if (req.idempotency === undefined) throw new Error('the binding set no req.idempotency');
    const response = await route(await webRequest(req), req.idempotency);
    await writeResponse(res, response);
  };
  const path = app.route('/r');
  // HEAD first: Express would otherwise answer HEAD with the GET handler.
  for (const method of METHODS) path[method](handler);
  return app;
}

async function webRequest(req) {
  const headers = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  return new Request(new URL(req.originalUrl, `http://${req.headers.host}`), {
    method: req.method,
    headers,
    body: hasBody ? await bodyBytes(req) : null,
  });
}

/** The body as sent: the binding's Buffer for a covered request, else the unread stream. */
async function bodyBytes(req) {
  if (Buffer.isBuffer(req.body)) return req.body;
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks);
}

async function writeResponse(res, response) {
  res.status(response.status);
  for (const [name, value] of response.headers) {
    if (name !== 'set-cookie') res.setHeader(name, value);
  }
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) res.setHeader('set-cookie', cookies);
  if (response.body === null) {
    res.end();
    return;
  }
  for await (const chunk of response.body) {
    if (!res.write(chunk)) await drainedOrClosed(res);
  }
  res.end();
}

function drainedOrClosed(res) {
  return new Promise((resolve) => {
    const settle = () => {
      res.off('drain', settle);
      res.off('close', settle);
      resolve();
    };
    res.on('drain', settle);
    res.on('close', settle);
  });
}
