import os from 'node:os';
import { fixed } from './table.js';

/** What a report says about the machine a run measured on. */
export interface MachineFacts {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  os: string;
  /** 1-minute load average at the start and the end: other work on the machine skews timings. */
  loadAverage: [number, number];
}

/** This machine now; `loadAtStart` is `os.loadavg()[0]` taken when the run began. */
export function machineFacts(loadAtStart: number): MachineFacts {
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    loadAverage: [loadAtStart, os.loadavg()[0] ?? Number.NaN],
  };
}

/**
 * The report's "Machine:" line; `servers` names what ran beside the bench (e.g. "Redis 7.0.15
 * at redis://…").
 */
export function describeMachine(
  machine: MachineFacts,
  servers: readonly string[],
  startedAt: string,
  durationMs: number,
): string {
  return (
    `Machine: ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, ${machine.os}; ` +
    `Node ${machine.node}; ${servers.join('; ')}; ${startedAt}; ` +
    `took ${Math.round(durationMs / 1000)} s; 1-min load average ${fixed(machine.loadAverage[0], 2)} at start, ` +
    `${fixed(machine.loadAverage[1], 2)} at end.`
  );
}

/** A URL with its credentials replaced by `***`, fit for a published report. */
export function redactUrl(url: string): string {
  return url.replace(/(\w+:\/\/)([^@/\s]*)@/, '$1***@');
}

/**
 * CPU time every process on the machine has spent so far (user, nice, system and interrupt
 * time of all cores, in µs; from `os.cpus()`, ticks of 10 ms on Linux). The difference over a
 * round is what the whole run cost — consumer, broker and Redis together — which bounds how fast
 * any consumer can go once the machine is saturated.
 */
export function machineBusyMicros(): number {
  let ms = 0;
  for (const { times } of os.cpus()) ms += times.user + times.nice + times.sys + times.irq;
  return ms * 1_000;
}
