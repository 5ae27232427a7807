export {
  type CaseResult,
  type CollectedCase,
  describeFailedCases,
  failedCaseIds,
  type RunCasesOptions,
  runCollectedCases,
} from './collectedCases.js';
export {
  FOREIGN_EVENTS,
  type ForeignEvent,
  type ForeignProducerCase,
  runForeignProducerCase,
} from './foreignProducer.js';
export { type ForkedServer, forkServerProcess } from './forkServerProcess.js';
export {
  type BrokerInspector,
  type QueueDepth,
  type ResolvedStoreTiming,
  type ResolvedTransportTiming,
  STORE_TIMING_DEFAULTS,
  type StoreHarness,
  type StoreTiming,
  TRANSPORT_TIMING_DEFAULTS,
  type TransportHarness,
  type TransportTiming,
} from './harness.js';
export {
  HTTP_TIMING_DEFAULTS,
  type HttpHarness,
  type HttpProcess,
  type HttpProcessSetup,
  type HttpRoute,
  type HttpRouteContext,
  type HttpServer,
  type HttpServerSetup,
  type HttpSuiteOptions,
  type HttpTiming,
  type ProcessRouteSetup,
  type ResolvedHttpTiming,
} from './http/harness.js';
export { processRoute } from './http/processRoute.js';
export {
  collectHttpCases,
  runHttpConformance,
} from './http/runHttpConformance.js';
export {
  type AnySpyRecord,
  HandlerSpy,
  recordAt,
  requestIdOf,
  type SettlementData,
  type SpyEvents,
  type SpyOutcome,
  type SpyRecord,
  type WaitOptions,
} from './spy.js';
export { collectStoreCases, runStoreConformance } from './store/runStoreConformance.js';
export {
  checkStoreModel,
  runStoreModel,
  type StoreModelHarness,
  type StoreModelOptions,
} from './store/storeModel.js';
export {
  collectTransportCases,
  runTransportConformance,
} from './transport/runTransportConformance.js';
