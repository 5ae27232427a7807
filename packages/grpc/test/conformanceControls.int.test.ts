import { Metadata, ServerInterceptingCall, type ServerInterceptor, status } from '@grpc/grpc-js';
import { describeFailedCases, failedCaseIds, runCollectedCases } from '@idemq/conformance';
import { collectGrpcCases, paymentsService } from '@idemq/conformance/grpc';
import type { Store } from '@idemq/core';
import { describe, expect, it } from 'vitest';
import { type GrpcIdempotencyOptions, idempotencyInterceptor } from '../src/index.js';
import {
  interceptorHarness,
  type MakeInterceptors,
  type StoreKind,
} from './conformanceHarnesses.js';
import { storeWith } from './storeWith.js';

/*
 * Negative controls of the gRPC conformance suite: a checker is trusted only when broken
 * interceptors fail it. The real interceptor passes every case through the same runner; then
 * each broken one below must make the cases named for it fail.
 */

const CONCURRENCY = 4;

/** The real interceptor made with `change(options)`: a binding that passes the wrong options. */
const withOptions =
  (change: (options: GrpcIdempotencyOptions) => GrpcIdempotencyOptions): MakeInterceptors =>
  (options) => [idempotencyInterceptor(change(options))];

/**
 * The real interceptor behind one that rewrites every status it sends (grpc-js puts the first
 * interceptor next to the transport, so it sees the statuses the real one sends itself).
 */
const rewritingStatuses =
  (
    rewrite: (
      sent: Parameters<ServerInterceptingCall['sendStatus']>[0],
      call: ServerInterceptingCall,
    ) => void,
  ): MakeInterceptors =>
  (options) => {
    const rewriter: ServerInterceptor = (_method, call) => {
      const intercepting: ServerInterceptingCall = new ServerInterceptingCall(call, {
        sendStatus: (sent, next) => {
          rewrite(sent, intercepting);
          next(sent);
        },
      });
      return intercepting;
    };
    return [rewriter, idempotencyInterceptor(options)];
  };

/** A store that forgets each record as it completes it: the record is released instead. */
function forgetful(store: Store): Store {
  return storeWith(store, { complete: (request) => store.release(request) });
}

const controls: Array<{
  broken: string;
  kind: StoreKind;
  make: MakeInterceptors;
  caughtBy: string[];
}> = [
  {
    broken: 'forgets every completed record',
    kind: 'memory',
    make: withOptions((o) => ({ ...o, store: forgetful(o.store) })),
    caughtBy: ['G01', 'G03', 'G05', 'G07', 'G08', 'G09'],
  },
  {
    broken: 'advises a constant retry delay with ABORTED',
    kind: 'memory',
    make: rewritingStatuses((sent) => {
      if (sent.code !== status.ABORTED || !sent.metadata) return;
      sent.metadata.set('retry-after-ms', '1000');
      sent.metadata.set('grpc-retry-pushback-ms', '1000');
      sent.metadata.remove('grpc-status-details-bin');
    }),
    caughtBy: ['G02'],
  },
  {
    broken: 'sends its refusals after response headers (not Trailers-Only)',
    kind: 'memory',
    make: rewritingStatuses((sent, call) => {
      if (sent.code !== status.OK) call.sendMetadata(new Metadata());
    }),
    caughtBy: ['G02', 'G04', 'G05', 'G06'],
  },
  {
    broken: 'answers key reuse with INVALID_ARGUMENT',
    kind: 'memory',
    make: rewritingStatuses((sent) => {
      if (sent.code === status.FAILED_PRECONDITION) sent.code = status.INVALID_ARGUMENT;
    }),
    caughtBy: ['G05'],
  },
  {
    broken: 'fingerprints every request alike',
    kind: 'memory',
    make: withOptions((o) => ({ ...o, fingerprint: () => 'same' })),
    caughtBy: ['G05'],
  },
  {
    broken: 'never requires a key',
    kind: 'memory',
    make: withOptions((o) => ({ ...o, required: false })),
    caughtBy: ['G06'],
  },
  {
    broken: 'stores every status',
    kind: 'memory',
    make: withOptions((o) => ({ ...o, storeStatus: () => true })),
    caughtBy: ['G08'],
  },
  {
    broken: 'stores no error status',
    kind: 'memory',
    make: withOptions((o) => ({ ...o, storeStatus: (code) => code === status.OK })),
    caughtBy: ['G08'],
  },
  {
    broken: 'replays every metadata entry',
    kind: 'memory',
    make: withOptions((o) => ({
      ...o,
      replayMetadata: [...(o.replayMetadata ?? []), 'x-internal', 'x-debug'],
    })),
    caughtBy: ['G01'],
  },
  {
    broken: 'guards the methods that are safe to retry',
    kind: 'memory',
    make: withOptions((o) => ({
      ...o,
      methods: Object.values(paymentsService()).filter((m) => !m.responseStream),
    })),
    caughtBy: ['G10'],
  },
  {
    broken: 'runs the handler when the store is down',
    kind: 'redis',
    make: withOptions((o) => ({ ...o, onStoreError: 'process' })),
    caughtBy: ['G11'],
  },
];

/** G12 runs only where a control breaks it; it takes a lease-long wait. */
const withoutCrash = (id: string) => id !== 'G12';
/** A broken interceptor may leave a case waiting for an answer that never comes: fail it sooner. */
const timing = { caseTimeoutMs: 8_000, waitMs: 4_000 };
const CONTROL_TIMEOUT_MS = 60_000;

describe('grpc conformance negative controls', () => {
  for (const kind of ['memory', 'redis'] as const) {
    it(`the interceptor passes every case through the collected runner (${kind} store)`, async () => {
      const cases = collectGrpcCases({ ...interceptorHarness(kind), cases: withoutCrash });
      const results = await runCollectedCases(cases, { concurrency: CONCURRENCY });
      expect(results.length).toBeGreaterThanOrEqual(10);
      expect(failedCaseIds(results), describeFailedCases(results)).toEqual([]);
    });
  }

  for (const control of controls) {
    it(
      `catches an interceptor that ${control.broken}`,
      async () => {
        const harness = {
          ...interceptorHarness(control.kind, control.make),
          cases: withoutCrash,
          timing,
        };
        const results = await runCollectedCases(collectGrpcCases(harness), {
          concurrency: CONCURRENCY,
        });
        expect(failedCaseIds(results), describeFailedCases(results)).toEqual(
          expect.arrayContaining(control.caughtBy),
        );
      },
      CONTROL_TIMEOUT_MS,
    );
  }
});
