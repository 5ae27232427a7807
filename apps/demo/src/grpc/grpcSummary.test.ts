import { describe, expect, it } from 'vitest';
import type { GrpcRunFigures } from './grpcScenario.js';
import { formatGrpcJson, formatGrpcSummary, grpcViolations } from './grpcSummary.js';

const correct: GrpcRunFigures = {
  transport: 'grpc',
  server: 'grpc-js + @idemq/grpc interceptor',
  store: 'memory',
  seed: 1,
  clients: 4,
  deadlineMs: 100,
  maxHandlerMs: 150,
  failureRate: 0.05,
  requested: 10,
  calls: 16,
  deadlineExpiries: 3,
  aborted: 1,
  unavailable: 1,
  replays: 1,
  unexpectedStatuses: 0,
  handlerRuns: 11,
  injectedFailures: 1,
  charges: 10,
  charged: 10,
  chargedTwice: 0,
  lost: 0,
  timedOut: false,
  interrupted: false,
  elapsedMs: 1234,
  samples: { chargedTwice: [], lost: [], errors: [] },
};

describe('the gRPC summary', () => {
  it('shows calls, retries, deadline expiries, ABORTED, replays and the verdict', () => {
    const text = formatGrpcSummary(correct);
    expect(text).toMatch(/│ calls +│ +16 │ first attempts and retries/);
    expect(text).toMatch(/│ retries +│ +6 │ each with the idempotency-key of its first call/);
    expect(text).toMatch(
      /│ handler runs +│ +11 │ 10 charges \+ 1 injected failures \(planned rate 5 %\)/,
    );
    expect(text).toMatch(/│ deadline expiries +│ +3 │ DEADLINE_EXCEEDED after 100 ms/);
    expect(text).toMatch(/│ ABORTED +│ +1 │/);
    expect(text).toMatch(/│ replays +│ +1 │/);
    expect(text).toMatch(/│ charged twice +│ +0 │ must be 0: ok/);
    expect(text).toMatch(/^OK: every payment charged exactly once/m);
    expect(JSON.parse(formatGrpcJson(correct))).toMatchObject({ ok: true, violations: [] });
  });

  it('fails on a payment charged twice, a lost payment and an unexpected status', () => {
    const broken: GrpcRunFigures = {
      ...correct,
      charges: 11,
      chargedTwice: 1,
      lost: 1,
      unexpectedStatuses: 2,
      samples: { chargedTwice: ['pay_000003'], lost: ['pay_000004'], errors: ['INTERNAL: x'] },
    };
    expect(grpcViolations(broken)).toEqual([
      '1 payment(s) charged more than once (e.g. pay_000003)',
      '1 payment(s) whose client never got its charge (e.g. pay_000004)',
      '2 answer(s) neither OK, DEADLINE_EXCEEDED, ABORTED nor UNAVAILABLE',
    ]);
    const text = formatGrpcSummary(broken);
    expect(text).toMatch(/│ charged twice +│ +1 │ must be 0: FAILED/);
    expect(text).toMatch(/│ other statuses +│ +2 │ must be 0: FAILED/);
    expect(text).toMatch(/^FAILED:$/m);
    expect(text).toMatch(/error: INTERNAL: x/);
    expect(JSON.parse(formatGrpcJson(broken))).toMatchObject({ ok: false });
  });
});
