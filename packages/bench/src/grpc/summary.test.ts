import { describe, expect, it } from 'vitest';
import { parseGrpcCli } from './cli.js';
import {
  evaluateGrpcGoals,
  type GrpcRow,
  grpcMarkdown,
  perCall,
  summarizeRounds,
} from './summary.js';

const round = (callsPerSecond: number, p99Ms = 10, nonOk = 0) => ({
  callsPerSecond,
  p50Ms: 2,
  p99Ms,
  nonOk,
  serverCpuUsPerCall: 50,
});

const goodProbe = {
  roundTripsPerNew: 2,
  roundTripsPerReplay: 1,
  replaysMarked: 50,
  replayCalls: 50,
  stormHandlerRuns: 1,
  stormCalls: 100,
};

describe('gRPC bench summary', () => {
  it('takes the median of each figure and sums the failures of every round', () => {
    const row = summarizeRounds('idemq', 'new', 64, [
      round(100, 30, 1),
      round(300, 10),
      round(200, 20, 2),
    ]);
    expect(row.callsPerSecond).toBe(200);
    expect(row.p99Ms).toBe(20);
    expect(row.nonOk).toBe(3);
    expect(row.rounds).toHaveLength(3);
  });

  it('divides a counter change by the calls', () => {
    expect(perCall(10, 110, 50)).toBe(2);
    expect(() => perCall(0, 1, 0)).toThrow(RangeError);
  });

  it('meets the goals only when every bound holds, and fails a storm that ran the handler twice', () => {
    const idemq: GrpcRow = {
      ...summarizeRounds('idemq', 'new', 64, [round(950)]),
      probe: goodProbe,
    };
    const idemqReplay = summarizeRounds('idemq', 'replay', 64, [round(1200)]);
    const hand = summarizeRounds('hand', 'new', 64, [round(1000)]);
    const handReplay = summarizeRounds('hand', 'replay', 64, [round(1000)]);
    const rows = [idemq, idemqReplay, hand, handReplay];
    expect(evaluateGrpcGoals(rows).every((goal) => goal.met)).toBe(true);

    const broken: GrpcRow = {
      ...idemq,
      callsPerSecond: 850,
      probe: {
        ...goodProbe,
        roundTripsPerNew: 3,
        roundTripsPerReplay: 2,
        replaysMarked: 49,
        stormHandlerRuns: 2,
      },
    };
    const slowReplay = { ...idemqReplay, callsPerSecond: 899 };
    const verdicts = evaluateGrpcGoals([broken, slowReplay, hand, handReplay]).map((g) => g.met);
    expect(verdicts).toEqual([false, false, false, false, false, false]);
  });

  it('evaluates no goal whose rows are missing', () => {
    expect(evaluateGrpcGoals([summarizeRounds('bare', 'new', 64, [round(2000)])])).toEqual([]);
    const idemqOnly = summarizeRounds('idemq', 'new', 64, [round(900)]);
    expect(evaluateGrpcGoals([idemqOnly])).toEqual([]);
  });

  it('writes each row against bare grpc-js, with the probes of the guarded servers', () => {
    const bare = summarizeRounds('bare', 'new', 64, [round(2000)]);
    const idemq: GrpcRow = {
      ...summarizeRounds('idemq', 'new', 64, [round(1000)]),
      probe: goodProbe,
    };
    const markdown = grpcMarkdown([bare, idemq], 'pnpm bench grpc', 'Machine: test');
    expect(markdown).toContain('| grpc-js, bare Charge | new each | 64 | 2,000 | 1.00 |');
    expect(markdown).toContain('| 1,000 | 0.50 | 2.00 | 10.00 | 50 | 0 | 2.00 / 1.00 | 1 of 100 |');
    expect(markdown).toContain('| ≤ 1 round trip per replay | 1.00 | yes |');
  });
});

describe('pnpm bench grpc options', () => {
  it('parses defaults and --only in table order', () => {
    expect(parseGrpcCli(['--only', 'hand,idemq', '--runs', '2'])).toMatchObject({
      runs: 2,
      durationSeconds: 5,
      load: 64,
      servers: ['idemq', 'hand'],
    });
  });

  it('reports every problem at once', () => {
    const problems = () => parseGrpcCli(['--concurrency', '0', '--only', 'envoy']);
    expect(problems).toThrow(/--concurrency must be a positive integer/);
    expect(problems).toThrow(/--only: unknown server "envoy"/);
  });
});
