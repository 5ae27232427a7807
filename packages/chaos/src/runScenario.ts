/**
 * One fault run: consumers, dead-letter reader, publisher and fault injector around a fresh set of
 * broker destinations, a fresh store prefix and a fresh ledger prefix; then the ledger audit and
 * the figures row. Everything the run created is removed at the end.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { IdempotencyRecord, Store } from '@idemq/core';
import { seededRandom } from '@idemq/core/testing';
import { redisStore } from '@idemq/redis';
import { Redis } from 'ioredis';
import { type AuditReport, audit, deadLettersOwed } from './audit.js';
import { allowedReExecutions } from './executionBound.js';
import { type FaultKind, faultSequence } from './faults.js';
import type { FiguresRow } from './figures.js';
import { type IdTrail, Ledger, type LedgerSnapshot } from './ledger.js';
import { planPublishing, publishAll } from './publisher.js';
import { RabbitmqServer } from './rabbitmqServer.js';
import type { Scenario } from './scenarios.js';
import { STORE_PROFILE, type StoreServer } from './storeServer.js';
import { BAD_INPUT_KINDS, expectedCodeFamily } from './transports/badInputs.js';
import { readDeadLetters } from './transports/deadLetters.js';
import { prepareKit, type ServiceAddresses } from './transports/kits.js';
import type { TransportName } from './transports/spec.js';
import { WorkerPool } from './workerPool.js';

export interface RunOptions {
  transport: TransportName;
  scenario: Scenario;
  services: ServiceAddresses;
  /** The ledger's Redis: never restarted. */
  ledgerUrl: string;
  /** The store's own redis-server (F03 restarts it). */
  storeServer: StoreServer;
  /**
   * In-process consumers only (memory transport): each consumer's store comes from here instead
   * of the store server, and the run reads records back through one more. The negative controls
   * run a deliberately broken store this way.
   */
  openStore?: () => Store;
  seed: number;
  /** Give up waiting for the run to settle after this long. */
  timeoutMs: number;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
  /** Aborted (Ctrl-C): the run stops where it is, removes what it created and rejects. */
  signal?: AbortSignal;
}

export interface RunResult {
  row: FiguresRow;
  report: AuditReport;
  /** Reasons the run failed; empty when every invariant held. */
  failures: string[];
}

export async function runScenario(options: RunOptions): Promise<RunResult> {
  const { scenario, storeServer, seed } = options;
  const log = options.log ?? (() => undefined);
  const random = seededRandom(seed);
  const tag = `chaos-${randomUUID().slice(0, 8)}`;
  const ledger = new Ledger(options.ledgerUrl, `idemq-chaos:${tag}`);
  const storePrefix = `idemq-chaos-${tag}`;
  const scope = 'chaos';
  // A broker restart needs a broker of the run's own: the shared one serves other suites.
  const restartsBroker =
    scenario.brokerRestarts > 0 || (scenario.rotation ?? []).includes('brokerRestart');
  const privateBroker = restartsBroker ? await RabbitmqServer.start() : undefined;
  const kit = await prepareKit(options.transport, options.services, privateBroker).catch(
    async (error: unknown) => {
      await privateBroker?.destroy();
      throw error;
    },
  );
  const pool = new WorkerPool(
    {
      transport: kit.spec,
      source: kit.source,
      scope,
      storeUrl: storeServer.url,
      storePrefix,
      ledgerUrl: options.ledgerUrl,
      ledgerPrefix: ledger.prefix,
      concurrency: scenario.concurrency,
      leaseMs: scenario.leaseMs,
      heartbeat: scenario.heartbeat,
      maxAttempts: scenario.maxAttempts,
      retryBaseDelayMs: scenario.retryBaseDelayMs,
      workMs: scenario.workMs,
      ...(scenario.firstAttemptWorkMs === undefined
        ? {}
        : { firstAttemptWorkMs: scenario.firstAttemptWorkMs }),
      storeErrorRetryDelayMs: 500,
    },
    kit.broker,
    options.openStore,
  );
  const startedAt = performance.now();
  const faults: Record<FaultKind, number> = {
    kill: 0,
    storeRestart: 0,
    storeKill: 0,
    brokerBreak: 0,
    brokerRestart: 0,
  };
  const restartsBefore = storeServer.restarts;
  const storeKillsBefore = storeServer.kills;
  let settled = false;
  let injector: Promise<void> | undefined;
  const records = storeRecords(
    options.openStore ?? (() => redisStore({ url: storeServer.url, prefix: storePrefix })),
    scope,
  );
  const failures: string[] = [];
  try {
    const interrupted = () => options.signal?.aborted === true;
    const deadLetters = await readDeadLetters(kit.transport, kit.deadLetterSource, ledger);
    await pool.start(scenario.consumers);
    log(`${options.transport} ${scenario.id}: ${pool.size} consumers up`);

    const plan = planPublishing(
      tag,
      scenario.messages,
      scenario.poison,
      scenario.duplicateRate,
      random,
    );
    const sequence = faultSequence(scenario);
    // Spread a bounded stream over the fault schedule, so every fault lands while handlers run.
    const publishOverMs =
      scenario.publishOverMs ??
      (Number.isFinite(sequence.total) ? (sequence.total + 0.5) * scenario.faultEveryMs : 0);

    let injecting = true;
    injector = (async () => {
      for (let fault = sequence.next(); fault && !settled; fault = sequence.next()) {
        await sleep(scenario.faultEveryMs, undefined, { signal: options.signal }).catch(
          () => undefined,
        );
        if (settled || interrupted()) break;
        if (fault === 'kill') {
          await pool.killOne(random);
        } else if (fault === 'storeRestart') {
          await storeServer.restart(1_500, 'SIGTERM');
        } else if (fault === 'storeKill') {
          await storeServer.restart(1_500, 'SIGKILL');
        } else if (fault === 'brokerRestart') {
          if (!kit.restartBroker) throw new Error(`${options.transport}: no broker to restart`);
          log(`${options.transport} ${scenario.id}: ${await kit.restartBroker()}`);
        } else {
          log(`${options.transport} ${scenario.id}: ${await kit.breakConnections(pool, random)}`);
        }
        faults[fault]++;
      }
    })().finally(() => {
      injecting = false;
    });

    const badKinds = scenario.badInputCopies > 0 ? BAD_INPUT_KINDS : [];
    for (let copy = 0; copy < scenario.badInputCopies; copy++) {
      for (const kind of badKinds) await kit.publishBad(kind);
    }
    await publishAll(kit.transport, kit.source, plan.order, publishOverMs, options.signal);
    log(`${options.transport} ${scenario.id}: published ${plan.order.length} copies`);

    const badInputs = badKinds.length * scenario.badInputCopies;
    const published = {
      healthy: plan.healthy,
      poison: plan.poison,
      badInputs,
      maxAttempts: scenario.maxAttempts,
    };
    const expectedDead = plan.poison.length + badInputs;
    const deadline = performance.now() + options.timeoutMs;
    // A store that does not answer (the soak restarts it at any time) leaves every id uncounted.
    const uncompletedIds = (ids: readonly string[]) =>
      ledger
        .uncompleted(ids)
        .then((left) => records.notCompleted(left))
        .then((left) => left.length)
        .catch(() => ids.length);
    let lastProgress = '';
    let settledInTime = false;
    let quietSince = performance.now();
    let lastLogAt = performance.now();
    while (performance.now() < deadline) {
      options.signal?.throwIfAborted();
      const [effects, deadLetters] = await Promise.all([
        ledger.effectCount(),
        ledger.deadLetters(),
      ]);
      const dead = expectedDead - deadLettersOwed(published, deadLetters);
      // A bounded run also waits for its last planned fault, so the table shows every fault.
      const faultsDone = !injecting || !Number.isFinite(sequence.total);
      // An applied effect is not the end of an id: its completion may have failed (store down)
      // and be pending a redelivery. Once effects are all in and no fault is due, count the ids
      // still waiting for one (the store's record answers for a consumer killed after it).
      const uncompleted =
        effects >= plan.healthy.length && faultsDone
          ? await uncompletedIds(plan.healthy)
          : plan.healthy.length;
      // Every dead letter read counts as progress (a poison id's copies may arrive twice).
      const progress = `${effects}/${plan.healthy.length} effects, ${plan.healthy.length - uncompleted} completed, ${dead}/${expectedDead} dead letters accounted (${deadLetters.length} read)`;
      if (progress !== lastProgress) {
        lastProgress = progress;
        quietSince = performance.now();
      }
      if (performance.now() - lastLogAt > 15_000) {
        lastLogAt = performance.now();
        log(`${options.transport} ${scenario.id}: ${progress}, ${JSON.stringify(faults)}`);
      }
      const complete = uncompleted === 0 && dead === expectedDead && faultsDone;
      // Complete and quiet for a moment: late copies and zombies have had their say.
      if (complete && performance.now() - quietSince > 1_500) {
        settledInTime = true;
        break;
      }
      await sleep(250);
    }
    settled = true;
    // Read before the consumers stop: stopping gives their unsettled deliveries back.
    const brokerState = settledInTime
      ? undefined
      : await kit.queueDepths?.().catch((error: unknown) => `queue depths unavailable: ${error}`);
    log(`${options.transport} ${scenario.id}: ${lastProgress}`);
    await injector;
    await pool.stop();
    await deadLetters.close();
    const wallMs = Math.round(performance.now() - startedAt);

    const snapshot = await ledger.snapshot();
    const withoutLedgerCompletion = plan.healthy.filter((id) => !snapshot.completions.has(id));
    const storeOnly = await records.read(withoutLedgerCompletion);
    const completedInStore = new Set(
      withoutLedgerCompletion.filter((id) => storeOnly.get(id)?.state === 'COMPLETED'),
    );
    const allowance = allowedReExecutions(scenario.executionBound, {
      consumers: scenario.consumers,
      concurrency: scenario.concurrency,
      faults,
      healthyIds: plan.healthy.length,
    });
    const report = audit(published, snapshot, completedInStore, allowance);
    if (!report.ok) {
      const trails = await ledger.trails(report.lost.slice(0, LOST_TRACED));
      failures.push(describeFailures(report, snapshot, storeOnly, trails));
      if (brokerState) failures.push(`broker at the deadline: ${brokerState}`);
    }
    const untimed = await keysWithoutTtl(storeServer.url, storePrefix);
    if (untimed > 0) failures.push(`${untimed} store keys without a TTL`);
    failures.push(...(scenario.check?.(report, snapshot.counters) ?? []));
    for (const kind of badKinds) {
      const family = expectedCodeFamily(kind);
      const found = Object.entries(report.deadLetteredByCode)
        .filter(([code]) => code.startsWith(family))
        .reduce((sum, [, count]) => sum + count, 0);
      if (found === 0) failures.push(`no dead letter with a ${family}* code (${kind})`);
    }
    const row: FiguresRow = {
      transport: options.transport,
      scenario: scenario.id,
      consumers: scenario.consumers,
      storeProfile: STORE_PROFILE,
      consumerKind: pool.inProcess ? 'in-process' : 'process',
      messages: plan.healthy.length + plan.poison.length,
      published: plan.order.length + badInputs,
      duplicatesInjected: plan.duplicatesInjected,
      badInputs,
      kills: faults.kill,
      storeRestarts: storeServer.restarts - restartsBefore,
      storeKills: storeServer.kills - storeKillsBefore,
      brokerBreaks: faults.brokerBreak,
      brokerRestarts: faults.brokerRestart,
      executions: report.executions,
      completions: report.completions,
      completionsSeenOnlyInStore: report.completionsSeenOnlyInStore,
      completedTwice: report.completedTwice.length,
      lost: report.lost.length,
      deadLettered: report.deadLettered,
      deadLetteredByCode: report.deadLetteredByCode,
      reExecutions: report.reExecutions,
      reExecutionsAllowed: allowance.allowed,
      replayedEffects: report.replayedEffects,
      staleEffectsRefused: snapshot.counters.staleEffects,
      leaseLost: snapshot.counters.leaseLostStore,
      brokerLeaseLost: snapshot.counters.leaseLostBroker,
      unclaimedExecutions: report.unclaimedExecutions,
      duplicatesSkipped: snapshot.counters.duplicatesSkipped,
      storeErrors: snapshot.counters.storeErrors,
      storeKeysWithoutTtl: untimed,
      wallMs,
      seed,
      passed: failures.length === 0,
    };
    return { row, report, failures };
  } finally {
    settled = true;
    // A run that failed must not leave a fault (a store restart) to land in the next one.
    await injector?.catch(() => undefined);
    await records.close()?.catch(() => undefined);
    await pool.stop().catch(() => undefined);
    await kit.close().catch(() => undefined);
    await privateBroker?.destroy().catch(() => undefined);
    await ledger.drop().catch(() => undefined);
    ledger.close();
  }
}

/**
 * Reads the run's store records through one client, opened on first use (most runs never need
 * it) and reconnecting by itself after a store restart.
 */
function storeRecords(open: () => Store, scope: string) {
  let store: Store | undefined;
  const read = async (ids: readonly string[]) => {
    const found = new Map<string, IdempotencyRecord | undefined>();
    if (ids.length === 0) return found;
    store ??= open();
    for (const requestId of ids) found.set(requestId, await store.inspect({ scope, requestId }));
    return found;
  };
  return {
    read,
    /** The ids among `ids` whose store record is not COMPLETED. */
    async notCompleted(ids: readonly string[]): Promise<string[]> {
      const found = await read(ids);
      return ids.filter((id) => found.get(id)?.state !== 'COMPLETED');
    },
    close: () => store?.close(),
  };
}

/** Store keys of the run with no expiry (every record must expire: nothing grows unbounded). */
async function keysWithoutTtl(storeUrl: string, prefix: string): Promise<number> {
  const redis = new Redis(storeUrl);
  let count = 0;
  try {
    for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 1_000 })) {
      const batch = keys as string[];
      if (batch.length === 0) continue;
      const pipeline = redis.pipeline();
      for (const key of batch) pipeline.pttl(key);
      for (const [, ttl] of (await pipeline.exec()) ?? []) if (ttl === -1) count++;
    }
  } finally {
    redis.disconnect();
  }
  return count;
}

/** Lost ids a failure report traces one by one. */
const LOST_TRACED = 5;

function describeFailures(
  report: AuditReport,
  snapshot: LedgerSnapshot,
  storeOnly: ReadonlyMap<string, IdempotencyRecord | undefined>,
  trails: ReadonlyMap<string, IdTrail>,
): string {
  const sample = (ids: string[]) => ids.slice(0, 5).join(', ');
  // What a lost id left behind, so that a failure in CI can be told from a harness mistake.
  const trace = (id: string) => {
    const record = storeOnly.get(id);
    const stored = !storeOnly.has(id)
      ? 'completion in the ledger'
      : record
        ? `${record.state}, attempt ${record.attempt}`
        : 'no record';
    return `${id}: ${snapshot.executions.get(id) ?? 0} executions, effect ${
      snapshot.effects.has(id) ? 'applied' : 'missing'
    }, store ${stored}, ${describeTrail(trails.get(id))}`;
  };
  const parts: string[] = [];
  if (report.lost.length) {
    const traced = report.lost.slice(0, LOST_TRACED).map(trace).join('; ');
    parts.push(`${report.lost.length} lost (${traced})`);
  }
  if (report.completedTwice.length) {
    parts.push(
      `${report.completedTwice.length} completed twice (${sample(report.completedTwice)})`,
    );
  }
  if (report.healthyDeadLettered.length) {
    parts.push(`${report.healthyDeadLettered.length} healthy dead-lettered`);
  }
  if (report.poisonUnaccounted.length) {
    parts.push(`${report.poisonUnaccounted.length} poison unaccounted`);
  }
  if (report.badInputsUnaccounted !== 0) {
    parts.push(`bad inputs unaccounted: ${report.badInputsUnaccounted}`);
  }
  if (report.unclaimedExecutions) parts.push(`${report.unclaimedExecutions} unclaimed executions`);
  parts.push(...report.boundViolations);
  return parts.join('; ');
}

/** Whether a lost id's copies kept coming back (and how), or were never seen again. */
function describeTrail(trail: IdTrail | undefined): string {
  const counts = Object.entries(trail?.counts ?? {}).map(([event, n]) => `${event} ×${n}`);
  if (!trail?.last || counts.length === 0) return 'never sent round again';
  const { event, worker, at } = trail.last;
  const ago = ((Date.now() - at) / 1000).toFixed(1);
  return `sent round again: ${counts.join(', ')}; last ${event} on ${worker} ${ago} s before this report`;
}
