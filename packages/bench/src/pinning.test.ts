import { describe, expect, it } from 'vitest';
import { isLoopbackUrl, pinCores } from './pinning.js';

describe('pinCores', () => {
  it('changes nothing, and says why, when a server is not on this machine or gave no process id', () => {
    const remote = pinCores([{ name: 'Redis', local: false, pids: () => [1234] }]);
    expect(remote.description).toBe('not pinned (Redis is not on this machine)');
    const anonymous = pinCores([{ name: 'Redis', local: true, pids: undefined }]);
    expect(anonymous.description).toBe('not pinned (Redis did not give its process id)');
    const neither = pinCores([
      { name: 'Redis', local: false, pids: () => [1234] },
      { name: 'PostgreSQL', local: true, pids: () => [] },
    ]);
    expect(neither.description).toBe(
      'not pinned (Redis is not on this machine; PostgreSQL did not give its process id)',
    );
    expect(() => remote.restore()).not.toThrow();
  });

  it('takes only loopback URLs for a server on this machine', () => {
    expect(isLoopbackUrl('redis://127.0.0.1:6379')).toBe(true);
    expect(isLoopbackUrl('postgres://postgres@localhost:5432/postgres')).toBe(true);
    expect(isLoopbackUrl('redis://10.0.0.5:6379')).toBe(false);
  });
});
