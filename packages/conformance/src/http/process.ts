// Entry point `@idemq/conformance/http-process`: what a harness's child process imports. It must
// not load vitest, which only runs inside a test worker.
export type {
  HttpProcessSetup,
  HttpRoute,
  HttpRouteContext,
  ProcessRouteSetup,
} from './harness.js';
export { processRoute } from './processRoute.js';
