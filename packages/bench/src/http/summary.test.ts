import { describe, expect, it } from 'vitest';
import { parseHttpCli } from './cli.js';
import { evaluateHttpGoals, type HttpRow, perRequest, summarizeRounds } from './summary.js';

const round = (requestsPerSecond: number, p99Ms = 10, non2xx = 0) => ({
  requestsPerSecond,
  p50Ms: 2,
  p99Ms,
  non2xx,
  errors: 0,
  serverCpuUsPerRequest: 50,
});

describe('HTTP bench summary', () => {
  it('takes the median of each figure and sums the failures of every round', () => {
    const row = summarizeRounds('idemq', 'new', 64, [
      round(100, 30, 1),
      round(300, 10),
      round(200, 20, 2),
    ]);
    expect(row.requestsPerSecond).toBe(200);
    expect(row.p99Ms).toBe(20);
    expect(row.non2xx).toBe(3);
    expect(row.rounds).toHaveLength(3);
  });

  it('divides a counter change by the requests', () => {
    expect(perRequest(10, 110, 50)).toBe(2);
    expect(() => perRequest(0, 1, 0)).toThrow(RangeError);
  });

  it('meets the goals only when every bound holds, and fails a storm that ran the route twice', () => {
    const idemq: HttpRow = {
      ...summarizeRounds('idemq', 'new', 64, [round(1000)]),
      probe: { roundTripsPerNew: 2, roundTripsPerReplay: 1, stormRouteRuns: 1, stormRequests: 100 },
    };
    const hand = summarizeRounds('hand', 'new', 64, [round(1000)]);
    const peer = summarizeRounds('express-idempotency', 'new', 64, [round(400)]);
    expect(evaluateHttpGoals([idemq, hand, peer]).every((goal) => goal.met)).toBe(true);

    const broken: HttpRow = {
      ...idemq,
      requestsPerSecond: 850,
      probe: { roundTripsPerNew: 3, roundTripsPerReplay: 2, stormRouteRuns: 2, stormRequests: 100 },
    };
    const verdicts = evaluateHttpGoals([broken, hand, peer]).map((goal) => goal.met);
    expect(verdicts).toEqual([false, false, false, true, false]);
  });
});

describe('pnpm bench http options', () => {
  it('parses defaults and --only in table order', () => {
    expect(parseHttpCli(['--only', 'hand,idemq', '--runs', '2'])).toMatchObject({
      runs: 2,
      durationSeconds: 5,
      load: 64,
      servers: ['idemq', 'hand'],
    });
  });

  it('reports every problem at once', () => {
    const problems = () => parseHttpCli(['--runs', '0', '--only', 'nginx']);
    expect(problems).toThrow(/--runs must be a positive integer/);
    expect(problems).toThrow(/--only: unknown server "nginx"/);
  });
});
