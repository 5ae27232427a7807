import { appendFileSync } from 'node:fs';
import type { HttpRoute, ProcessRouteSetup } from './harness.js';

/**
 * The route a harness's server process serves for H08: each run appends `start <pid>` to
 * `countFile`, holds `holdMs`, appends `end <pid>` and answers 201. The lines are written
 * synchronously, so the count survives a SIGKILL of the process.
 */
export function processRoute(setup: ProcessRouteSetup): HttpRoute {
  return async () => {
    appendFileSync(setup.countFile, `start ${process.pid}\n`);
    await new Promise((resolve) => setTimeout(resolve, setup.holdMs));
    appendFileSync(setup.countFile, `end ${process.pid}\n`);
    return new Response(`done by ${process.pid}`, {
      status: 201,
      headers: { 'content-type': 'text/plain' },
    });
  };
}
