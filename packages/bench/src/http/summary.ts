/** Pure parts of the HTTP benchmark: rounds to medians, goals, the table. Tested on their own. */
import type { KeyMode } from '../serverBench.js';
import { median } from '../stats.js';
import { HTTP_SERVER_LABEL, type HttpServerName } from './types.js';

/** One load round against one server. */
export interface LoadRound {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers other than 2xx (a replay of the 201 counts as 2xx), and socket errors. */
  non2xx: number;
  errors: number;
  /** The server process's CPU time per answered request, in µs (the load generator's not counted). */
  serverCpuUsPerRequest: number;
}

/** What the correctness probes measured on a server with idempotency. */
export interface Probe {
  /** Redis round trips per request with a new key, and per replay. */
  roundTripsPerNew: number;
  roundTripsPerReplay: number;
  /** Route runs when 100 requests with one key arrived at once (1 is correct). */
  stormRouteRuns: number;
  stormRequests: number;
}

export interface HttpRow {
  server: HttpServerName;
  label: string;
  mode: KeyMode;
  connections: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  serverCpuUsPerRequest: number;
  rounds: LoadRound[];
  probe?: Probe;
}

/** The median of each figure over the rounds; failures summed, never hidden by a median. */
export function summarizeRounds(
  server: HttpServerName,
  mode: KeyMode,
  connections: number,
  rounds: readonly LoadRound[],
): HttpRow {
  return {
    server,
    label: HTTP_SERVER_LABEL[server],
    mode,
    connections,
    requestsPerSecond: median(rounds.map((r) => r.requestsPerSecond)),
    p50Ms: median(rounds.map((r) => r.p50Ms)),
    p99Ms: median(rounds.map((r) => r.p99Ms)),
    serverCpuUsPerRequest: median(rounds.map((r) => r.serverCpuUsPerRequest)),
    non2xx: rounds.reduce((sum, r) => sum + r.non2xx, 0),
    errors: rounds.reduce((sum, r) => sum + r.errors, 0),
    rounds: [...rounds],
  };
}

/** A counter's change over `requests` requests, per request. */
export function perRequest(before: number, after: number, requests: number): number {
  if (requests <= 0) throw new RangeError('requests must be positive');
  return (after - before) / requests;
}

export interface HttpGoal {
  goal: string;
  measured: string;
  met: boolean;
}

/** The goals, evaluated on the rows of one run (missing rows: goal not evaluated). */
export function evaluateHttpGoals(rows: readonly HttpRow[]): HttpGoal[] {
  const find = (server: HttpServerName, mode: KeyMode) =>
    rows.find((r) => r.server === server && r.mode === mode);
  const goals: HttpGoal[] = [];
  const idemq = find('idemq', 'new');
  if (idemq?.probe) {
    goals.push({
      goal: '≤ 2 round trips per new request',
      measured: fixed(idemq.probe.roundTripsPerNew),
      met: idemq.probe.roundTripsPerNew <= 2,
    });
    goals.push({
      goal: '≤ 1 round trip per replay',
      measured: fixed(idemq.probe.roundTripsPerReplay),
      met: idemq.probe.roundTripsPerReplay <= 1,
    });
    goals.push({
      goal: 'the route runs once per key (100 concurrent requests, one key)',
      measured: `${idemq.probe.stormRouteRuns} run(s)`,
      met: idemq.probe.stormRouteRuns === 1,
    });
  }
  const peer = find('express-idempotency', 'new');
  if (idemq && peer) {
    const ratio = idemq.requestsPerSecond / peer.requestsPerSecond;
    goals.push({
      goal: `≥ 2× the best peer's requests/s at ${idemq.connections} connections`,
      measured: `${fixed(ratio)}× express-idempotency`,
      met: ratio >= 2,
    });
  }
  const hand = find('hand', 'new');
  if (idemq && hand) {
    const ratio = idemq.requestsPerSecond / hand.requestsPerSecond;
    goals.push({
      goal: '≥ 0.9× the hand-written SET NX middleware',
      measured: `${fixed(ratio)}×`,
      met: ratio >= 0.9,
    });
  }
  return goals;
}

/** The report as Markdown: the load table, the probes, the goals. */
export function httpMarkdown(rows: readonly HttpRow[], command: string, machine: string): string {
  const bare = rows.find((r) => r.server === 'bare' && r.mode === 'new');
  const lines = [
    `Command: \`${command}\``,
    '',
    machine,
    '',
    '| server | keys | conn. | requests/s | × bare node:http | p50 ms | p99 ms | server CPU µs/request | non-2xx | Redis round trips per new / per replay | route runs, 100 concurrent same key |',
    '| --- | --- | --: | --: | --: | --: | --: | --: | --: | --: | --: |',
  ];
  for (const row of rows) {
    const ratio = bare ? fixed(row.requestsPerSecond / bare.requestsPerSecond) : '–';
    const trips = row.probe
      ? `${fixed(row.probe.roundTripsPerNew)} / ${fixed(row.probe.roundTripsPerReplay)}`
      : '–';
    const storm = row.probe ? `${row.probe.stormRouteRuns} of ${row.probe.stormRequests}` : '–';
    lines.push(
      `| ${row.label} | ${row.mode === 'new' ? 'new each' : 'one, replayed'} | ${row.connections} | ` +
        `${Math.round(row.requestsPerSecond).toLocaleString('en-US')} | ${ratio} | ${fixed(row.p50Ms)} | ` +
        `${fixed(row.p99Ms)} | ${Math.round(row.serverCpuUsPerRequest)} | ${row.non2xx + row.errors} | ${trips} | ${storm} |`,
    );
  }
  const goals = evaluateHttpGoals(rows);
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
