/** Pure parts of the gRPC benchmark: rounds to medians, goals, the table. Tested on their own. */

import type { KeyMode } from '../serverBench.js';
import { median } from '../stats.js';
import { GRPC_SERVER_LABEL, type GrpcServerName } from './types.js';

/** One load round against one server. */
export interface LoadRound {
  callsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Calls that ended with a status other than OK (a replayed OK is OK). */
  nonOk: number;
  /** The server process's CPU time per answered call, in µs (the load client's not counted). */
  serverCpuUsPerCall: number;
}

/** What the correctness probes measured on a server with idempotency. */
export interface Probe {
  /** Redis round trips per call with a new key, and per replay (sequential calls). */
  roundTripsPerNew: number;
  roundTripsPerReplay: number;
  /** Replays answered with `idempotent-replayed: true`, of `replayCalls`. */
  replaysMarked: number;
  replayCalls: number;
  /** Handler runs when 100 calls with one key arrived at once (1 is correct). */
  stormHandlerRuns: number;
  stormCalls: number;
}

export interface GrpcRow {
  server: GrpcServerName;
  label: string;
  mode: KeyMode;
  /** Calls kept in flight. */
  concurrency: number;
  callsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  nonOk: number;
  serverCpuUsPerCall: number;
  rounds: LoadRound[];
  probe?: Probe;
}

/** The median of each figure over the rounds; failures summed, never hidden by a median. */
export function summarizeRounds(
  server: GrpcServerName,
  mode: KeyMode,
  concurrency: number,
  rounds: readonly LoadRound[],
): GrpcRow {
  return {
    server,
    label: GRPC_SERVER_LABEL[server],
    mode,
    concurrency,
    callsPerSecond: median(rounds.map((r) => r.callsPerSecond)),
    p50Ms: median(rounds.map((r) => r.p50Ms)),
    p99Ms: median(rounds.map((r) => r.p99Ms)),
    serverCpuUsPerCall: median(rounds.map((r) => r.serverCpuUsPerCall)),
    nonOk: rounds.reduce((sum, r) => sum + r.nonOk, 0),
    rounds: [...rounds],
  };
}

/** A counter's change over `calls` calls, per call. */
export function perCall(before: number, after: number, calls: number): number {
  if (calls <= 0) throw new RangeError('calls must be positive');
  return (after - before) / calls;
}

export interface GrpcGoal {
  goal: string;
  measured: string;
  met: boolean;
}

/** The goals, evaluated on the rows of one run (missing rows: goal not evaluated). */
export function evaluateGrpcGoals(rows: readonly GrpcRow[]): GrpcGoal[] {
  const find = (server: GrpcServerName, mode: KeyMode) =>
    rows.find((r) => r.server === server && r.mode === mode);
  const goals: GrpcGoal[] = [];
  const idemq = find('idemq', 'new');
  if (idemq?.probe) {
    const { probe } = idemq;
    goals.push({
      goal: '≤ 2 round trips per new call',
      measured: fixed(probe.roundTripsPerNew),
      met: probe.roundTripsPerNew <= 2,
    });
    goals.push({
      goal: '≤ 1 round trip per replay',
      measured: fixed(probe.roundTripsPerReplay),
      met: probe.roundTripsPerReplay <= 1,
    });
    goals.push({
      goal: 'every replay marked `idempotent-replayed: true`',
      measured: `${probe.replaysMarked} of ${probe.replayCalls}`,
      met: probe.replaysMarked === probe.replayCalls,
    });
    goals.push({
      goal: 'the handler runs once per key (100 concurrent calls, one key)',
      measured: `${probe.stormHandlerRuns} run(s)`,
      met: probe.stormHandlerRuns === 1,
    });
  }
  for (const mode of ['new', 'replay'] as const) {
    const ours = find('idemq', mode);
    const hand = find('hand', mode);
    if (!ours || !hand) continue;
    const ratio = ours.callsPerSecond / hand.callsPerSecond;
    goals.push({
      goal: `≥ 0.9× the hand-written SET NX interceptor's calls/s, ${mode === 'new' ? 'new keys' : 'replays'}`,
      measured: `${fixed(ratio)}×`,
      met: ratio >= 0.9,
    });
  }
  return goals;
}

/** The report as Markdown: the load table, the probes, the goals. */
export function grpcMarkdown(rows: readonly GrpcRow[], command: string, machine: string): string {
  const bare = rows.find((r) => r.server === 'bare' && r.mode === 'new');
  const lines = [
    `Command: \`${command}\``,
    '',
    machine,
    '',
    '| server | keys | in flight | calls/s | × bare grpc-js | p50 ms | p99 ms | server CPU µs/call | non-OK | Redis round trips per new / per replay | handler runs, 100 concurrent same key |',
    '| --- | --- | --: | --: | --: | --: | --: | --: | --: | --: | --: |',
  ];
  for (const row of rows) {
    const ratio = bare ? fixed(row.callsPerSecond / bare.callsPerSecond) : '–';
    const trips = row.probe
      ? `${fixed(row.probe.roundTripsPerNew)} / ${fixed(row.probe.roundTripsPerReplay)}`
      : '–';
    const storm = row.probe ? `${row.probe.stormHandlerRuns} of ${row.probe.stormCalls}` : '–';
    lines.push(
      `| ${row.label} | ${row.mode === 'new' ? 'new each' : 'one, replayed'} | ${row.concurrency} | ` +
        `${Math.round(row.callsPerSecond).toLocaleString('en-US')} | ${ratio} | ${fixed(row.p50Ms)} | ` +
        `${fixed(row.p99Ms)} | ${Math.round(row.serverCpuUsPerCall)} | ${row.nonOk} | ${trips} | ${storm} |`,
    );
  }
  const goals = evaluateGrpcGoals(rows);
  if (goals.length > 0) {
    lines.push('', '| goal | measured | met |', '| --- | --- | --- |');
    for (const goal of goals) {
      lines.push(`| ${goal.goal} | ${goal.measured} | ${goal.met ? 'yes' : '**no**'} |`);
    }
  }
  return lines.join('\n');
}

function fixed(value: number): string {
  return Number.isFinite(value) ? value.toFixed(2) : '–';
}
