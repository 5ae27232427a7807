import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { type NodeAnswer, writeAnswer } from '../node/nodeAnswer.js';
import type { RealResponseMethods } from '../node/responseMethods.js';

/**
 * Sends `answer` on the real `res`: the headers set before the binding ran (`baseline`, e.g.
 * CORS) first, then the answer's own, its status, and its body.
 */
export function writeResponse(
  res: ServerResponse,
  answer: NodeAnswer,
  baseline: OutgoingHttpHeaders,
  real: RealResponseMethods,
): Promise<void> {
  // Node's own write sends the head through res.writeHead: it must be the real one again.
  res.writeHead = real.writeHead as ServerResponse['writeHead'];
  for (const name of res.getHeaderNames()) res.removeHeader(name);
  for (const [name, value] of Object.entries(baseline)) {
    if (value !== undefined) res.setHeader(name, value);
  }
  return writeAnswer(res, answer, real);
}
