import { describe, expect, it } from 'vitest';
import { pinCores } from './pinning.js';

describe('pinCores', () => {
  it('changes nothing, and says why, when Redis is not on this machine or gave no process id', () => {
    const remote = pinCores('redis://10.0.0.5:6379', 1234);
    expect(remote.description).toBe('not pinned (Redis is not on this machine)');
    const anonymous = pinCores('redis://127.0.0.1:6379', undefined);
    expect(anonymous.description).toBe('not pinned (Redis did not give its process id)');
    expect(() => remote.restore()).not.toThrow();
  });
});
