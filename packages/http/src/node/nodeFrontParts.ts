import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { captureAnswer, problemAnswer, replayAnswer } from './nodeAnswer.js';

/** What every front on node's request and response shares: answers are `NodeAnswer`s. */
export const nodeAnswers = Object.freeze({
  capture: captureAnswer,
  problem: problemAnswer,
  replay: replayAnswer,
});

/** A request header by its lower-case name, `null` when absent. */
export function headerOf(headers: IncomingHttpHeaders, name: string): string | null {
  const value = headers[name];
  if (value === undefined) return null;
  // Node keeps repeated set-cookie lines apart; any other repeat arrives joined with ", ".
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The path of a request target (`/orders?x=1` → `/orders`). */
export function pathOf(target: string): string {
  const query = target.indexOf('?');
  return query === -1 ? target : target.slice(0, query);
}

/** Reads a request's body whole, as a Buffer (the form `express.raw()` gives a route too). */
export function readRequestBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer | string) => {
      // A stream given an encoding by earlier middleware yields strings.
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    });
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}
