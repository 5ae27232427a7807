import { serviceUrls } from '@idemq/services';
import { describe, expect, it } from 'vitest';
import { BENCH_DEFAULTS, type BenchReport, type Row, runBench } from './bench.js';
import { connectPostgres, postgresFacts } from './postgresInfo.js';
import { benchNamespace, tablePrefix } from './runData.js';

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
      postgresUrl: serviceUrls().postgres,
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

/**
 * The PostgreSQL rows in quick mode against the real server: statements per message, both tables
 * made and dropped, the server read. Timing is never asserted here either.
 */
describe('bench quick mode on PostgreSQL', () => {
  const postgresUrl = serviceUrls().postgres;
  const namespace = benchNamespace();
  let report: BenchReport;
  const row = (contender: Row['contender'], concurrency: number) => {
    const found = report.rows.find(
      (r) => r.contender === contender && r.concurrency === concurrency,
    );
    if (!found) throw new Error(`no row for ${contender} at c=${concurrency}`);
    return found;
  };

  it('runs idemq and the INSERT … ON CONFLICT baseline on the whole workload, each on a table of its own', async () => {
    report = await runBench({
      // Never contacted: no Redis contender runs.
      redisUrl: 'redis://127.0.0.1:1',
      postgresUrl,
      ids: BENCH_DEFAULTS.quickIds,
      runs: BENCH_DEFAULTS.quickRuns,
      concurrency: [...BENCH_DEFAULTS.concurrency],
      contenders: ['idemq-postgres', 'postgres-baseline'],
      isolation: 'inline',
      warmupIds: 200,
      ceiling: true,
      namespace,
    });
    expect(report.rows).toHaveLength(4);
    expect(report.skipped).toEqual([]);
    expect(report.machine.postgres).toMatch(/^\d+/);
    expect(report.machine.redis).toBeUndefined();
    expect(report.ceilings).toEqual([]);
    for (const r of report.rows) {
      expect(r.store).toBe('postgres');
      // Every round's rows were counted and deleted: no "rows left" anomaly.
      expect(r.anomalies, `${r.contender} c=${r.concurrency}`).toEqual([]);
      const [round] = r.rounds;
      expect(round?.stream.outcomes.processed).toBe(BENCH_DEFAULTS.quickIds);
      expect(round?.stream.outcomes.duplicate).toBe(BENCH_DEFAULTS.quickIds / 5);
      expect(round?.duplicatesAgain.outcomes.duplicate).toBe(BENCH_DEFAULTS.quickIds / 5);
      expect(round?.keysDeleted).toBe(BENCH_DEFAULTS.quickIds);
    }
    // Each contender dropped its table on closing.
    const admin = await connectPostgres(postgresUrl);
    try {
      const { rows } = await admin.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM pg_tables WHERE left(tablename, length($1)) = $1',
        [tablePrefix(namespace)],
      );
      expect(rows[0]?.n).toBe(0);
    } finally {
      await admin.end();
    }
  });

  it('counts the baseline exactly: an INSERT and an UPDATE per processed message, an INSERT per duplicate', () => {
    // The negative control: a counter that missed statements would make idemq's bound vacuous.
    for (const c of BENCH_DEFAULTS.concurrency) {
      const baseline = row('postgres-baseline', c);
      expect(baseline.roundTripsPerProcessed).toBe(2);
      expect(baseline.roundTripsPerDuplicate).toBe(1);
      expect(baseline.commandsPerProcessed).toEqual({ insert: 1, update: 1 });
      expect(baseline.commandsPerDuplicate).toEqual({ insert: 1 });
      expect(baseline.vsBaseline).toBe(1);
    }
  });

  it("keeps idemq within 2 statements per processed message and 1 per duplicate, by store.stats() and by the pool's count", () => {
    for (const c of BENCH_DEFAULTS.concurrency) {
      const idemq = row('idemq-postgres', c);
      expect(idemq.roundTripsPerProcessed).toBeGreaterThan(0);
      expect(idemq.roundTripsPerProcessed).toBeLessThanOrEqual(2);
      expect(idemq.roundTripsPerDuplicate).toBeGreaterThan(0);
      expect(idemq.roundTripsPerDuplicate).toBeLessThanOrEqual(1);
      expect(Object.keys(idemq.commandsPerProcessed).sort()).toEqual([
        'with…insert',
        'with…update',
      ]);
      expect(idemq.vsBaseline).toBeGreaterThan(0);
      for (const phase of [idemq.rounds[0]?.stream, idemq.rounds[0]?.duplicatesAgain]) {
        expect(phase?.libraryRoundTrips).toBeGreaterThan(0);
        expect(phase?.libraryRoundTrips).toBe(phase?.client.total);
      }
    }
    // Sequential: exactly claim + complete, and one claim per duplicate.
    expect(row('idemq-postgres', 1).roundTripsPerProcessed).toBe(2);
    expect(row('idemq-postgres', 1).roundTripsPerDuplicate).toBe(1);
    expect(report.goals.map((g) => [g.store, g.name])).toEqual([
      ['postgres', 'idemq round trips per processed message (store.stats())'],
      ['postgres', 'idemq msg/s at concurrency 64 vs hand-written INSERT … ON CONFLICT DO NOTHING'],
    ]);
  });

  it("reads the server: each record's table bytes, and PostgreSQL's CPU when it runs on this machine", async () => {
    const admin = await connectPostgres(postgresUrl);
    const { postmaster } = await postgresFacts(admin).finally(() => admin.end());
    for (const r of report.rows) {
      // A row of some 60 bytes of id plus its index entry: more than the id, far less than a page.
      expect(r.bytesPerRecord, r.contender).toBeGreaterThan(60);
      expect(r.bytesPerRecord, r.contender).toBeLessThan(4096);
      if (postmaster === undefined) expect(r.serverCpuMicrosPerMessage).toBeNaN();
      else expect(r.serverCpuMicrosPerMessage, r.contender).toBeGreaterThan(0);
    }
  });

  it('leaves the PostgreSQL rows out with a line saying why when the server does not answer, unless they were asked for', async () => {
    const options = {
      redisUrl: 'redis://127.0.0.1:1',
      postgresUrl: 'postgres://postgres@127.0.0.1:1/postgres',
      ids: 10,
      runs: 1,
      concurrency: [1],
      contenders: ['idemq-postgres', 'postgres-baseline'] as Row['contender'][],
      isolation: 'inline' as const,
      warmupIds: 0,
      ceiling: false,
    };
    const skipped = await runBench({ ...options, optionalStores: ['postgres'] });
    expect(skipped.rows).toEqual([]);
    expect(skipped.skipped).toEqual([
      expect.stringMatching(
        /^PostgreSQL rows skipped: PostgreSQL at postgres:\/\/\*\*\*@127\.0\.0\.1:1\/postgres did not answer \(.+\)/,
      ),
    ]);
    await expect(runBench(options)).rejects.toThrow(/did not answer/);
  });
});
