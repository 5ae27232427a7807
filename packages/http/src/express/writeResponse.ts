import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { nodeHeaderEntries } from '../bindingHeaders.js';
import type { RealResponseMethods } from './responseCapture.js';

/**
 * Sends `response` on the real `res`: the headers set before the binding ran (`baseline`, e.g.
 * CORS) first, then the Response's own, its status, and its body bytes as they come.
 */
export async function writeResponse(
  res: ServerResponse,
  response: Response,
  baseline: OutgoingHttpHeaders,
  real: RealResponseMethods,
): Promise<void> {
  // Node's own write sends the head through res.writeHead: it must be the real one again.
  res.writeHead = real.writeHead as ServerResponse['writeHead'];
  for (const name of res.getHeaderNames()) res.removeHeader(name);
  for (const [name, value] of Object.entries(baseline)) {
    if (value !== undefined) res.setHeader(name, value);
  }
  for (const [name, value] of nodeHeaderEntries(response.headers)) res.setHeader(name, value);
  res.statusCode = response.status;
  if (response.statusText) res.statusMessage = response.statusText;

  if (response.body === null) {
    real.end.call(res);
    return;
  }
  try {
    for await (const chunk of response.body) {
      if (res.destroyed) return;
      if (!real.write.call(res, chunk)) await drainedOrClosed(res);
    }
  } catch (error) {
    // Ending normally would hand the client a truncated body that looks complete.
    res.destroy(error instanceof Error ? error : new Error(String(error)));
    return;
  }
  if (!res.destroyed) real.end.call(res);
}

function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const settle = (): void => {
      res.off('drain', settle);
      res.off('close', settle);
      resolve();
    };
    res.on('drain', settle);
    res.on('close', settle);
  });
}
