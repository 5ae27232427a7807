import { serviceUrls } from '@idemq/services';
import { describe, expect, it } from 'vitest';
import { BENCH_DEFAULTS, type BenchReport, type Row, runBench } from './bench.js';

/**
 * The bench's quick mode against the real Redis, asserting only what does not depend on the
 * machine: how many commands leave the process per message. Timing is never asserted here.
 */
describe('bench quick mode', () => {
  let report: BenchReport;
  const row = (contender: Row['contender'], concurrency: number) => {
    const found = report.rows.find(
      (r) => r.contender === contender && r.concurrency === concurrency,
    );
    if (!found) throw new Error(`no row for ${contender} at c=${concurrency}`);
    return found;
  };

  it('runs idemq and the baseline on the whole workload, every message handled as expected', async () => {
    report = await runBench({
      redisUrl: serviceUrls().redis,
      ids: BENCH_DEFAULTS.quickIds,
      runs: BENCH_DEFAULTS.quickRuns,
      concurrency: [...BENCH_DEFAULTS.concurrency],
      contenders: ['idemq', 'idemq-cache', 'fenced-lua', 'baseline'],
      isolation: 'inline',
      warmupIds: 200,
      ceiling: false,
    });
    expect(report.rows).toHaveLength(8);
    for (const r of report.rows) {
      expect(r.anomalies, `${r.contender} c=${r.concurrency}`).toEqual([]);
      const [round] = r.rounds;
      expect(round?.stream.outcomes.processed).toBe(BENCH_DEFAULTS.quickIds);
      expect(round?.stream.outcomes.duplicate).toBe(BENCH_DEFAULTS.quickIds / 5);
      expect(round?.duplicatesAgain.outcomes.duplicate).toBe(BENCH_DEFAULTS.quickIds / 5);
    }
  });

  it('counts the baseline exactly: 2 commands per processed message, 1 per duplicate', () => {
    // The negative control: a counter that missed commands would make idemq's bound vacuous.
    for (const c of BENCH_DEFAULTS.concurrency) {
      expect(row('baseline', c).roundTripsPerProcessed).toBe(2);
      expect(row('baseline', c).roundTripsPerDuplicate).toBe(1);
      expect(row('baseline', c).commandsPerProcessed).toEqual({ set: 2 });
    }
  });

  it('keeps idemq within 2 script calls per processed message and 1 per duplicate', () => {
    for (const c of BENCH_DEFAULTS.concurrency) {
      const idemq = row('idemq', c);
      expect(idemq.roundTripsPerProcessed).toBeGreaterThan(0);
      expect(idemq.roundTripsPerProcessed).toBeLessThanOrEqual(2);
      expect(idemq.roundTripsPerDuplicate).toBeGreaterThan(0);
      expect(idemq.roundTripsPerDuplicate).toBeLessThanOrEqual(1);
      // Every command idemq sends is a script call.
      expect(Object.keys(idemq.commandsPerProcessed)).toEqual(['evalsha']);
      // The server saw at least those calls (other clients of a shared Redis only add to it).
      const [round] = idemq.rounds;
      const server = round?.stream.server.byName ?? {};
      expect((server.evalsha ?? 0) + (server.eval ?? 0)).toBeGreaterThanOrEqual(
        round?.stream.client.total ?? Number.POSITIVE_INFINITY,
      );
    }
    // Sequential: exactly claim + complete, and one claim per duplicate.
    expect(row('idemq', 1).roundTripsPerProcessed).toBe(2);
    expect(row('idemq', 1).roundTripsPerDuplicate).toBe(1);
  });

  it('runs the hand-written fenced floor as one script call per operation, and sizes records', () => {
    for (const c of BENCH_DEFAULTS.concurrency) {
      const floor = row('fenced-lua', c);
      expect(floor.roundTripsPerProcessed).toBe(2);
      expect(floor.roundTripsPerDuplicate).toBe(1);
      expect(floor.commandsPerProcessed).toEqual({ evalsha: 2 });
      // A record under a key of some 60 bytes: more than its key, far less than a KiB.
      for (const contender of ['idemq', 'fenced-lua', 'baseline'] as const) {
        expect(row(contender, c).bytesPerRecord, contender).toBeGreaterThan(60);
        expect(row(contender, c).bytesPerRecord, contender).toBeLessThan(1024);
      }
    }
  });

  it('leaves the first duplicate of an id to Redis with the local cache on (each comes once here)', () => {
    for (const c of BENCH_DEFAULTS.concurrency) {
      const cached = row('idemq-cache', c);
      expect(cached.roundTripsPerDuplicate).toBeGreaterThan(0);
      expect(cached.roundTripsPerDuplicate).toBeLessThanOrEqual(1);
      expect(cached.roundTripsPerProcessed).toBeLessThanOrEqual(2);
      expect(cached.rounds[0]?.cacheHits).toBe(0);
    }
  });
});
