import { describe, expect, it } from 'vitest';
import { postgresCpuMicros, postgresPids, postmasterOf } from './postgresProcesses.js';

describe('PostgreSQL processes from /proc', () => {
  it('reads a process tree and its CPU time, and takes no other program for PostgreSQL', () => {
    // This Node process stands in for a postmaster: its tree and CPU time are read the same way.
    expect(postgresPids(process.pid)[0]).toBe(process.pid);
    const cpu = postgresCpuMicros(process.pid);
    expect(cpu).toBeGreaterThan(0);
    expect(postgresCpuMicros(process.pid)).toBeGreaterThanOrEqual(cpu);
    expect(postmasterOf(process.pid)).toBeUndefined();
    expect(postgresCpuMicros(2 ** 30)).toBeNaN();
  });
});
