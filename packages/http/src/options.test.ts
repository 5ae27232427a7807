import { InvalidOptionsError, memoryStore } from '@idemq/core';
import { describe, expect, it } from 'vitest';
import { createHttpIdempotency } from './createHttpIdempotency.js';
import type { HttpIdempotencyOptions } from './types.js';

describe('createHttpIdempotency options', () => {
  it('lists every bad option in one InvalidOptionsError', () => {
    const bad = {
      store: {},
      methods: 'POST',
      headerName: 'Idempotency Key',
      maxKeyLength: 0,
      onStoreError: 'retry',
      maxResponseBytes: -1,
      principal: 'tenant',
    } as unknown as HttpIdempotencyOptions;
    let thrown: unknown;
    try {
      createHttpIdempotency(bad);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidOptionsError);
    const problems = (thrown as InvalidOptionsError).problems.join('\n');
    for (const field of [
      'store',
      'methods',
      'headerName',
      'maxKeyLength',
      'onStoreError',
      'maxResponseBytes',
      'principal',
    ]) {
      expect(problems).toContain(field);
    }
  });

  it('takes the defaults', () => {
    expect(() => createHttpIdempotency({ store: memoryStore() })).not.toThrow();
  });
});
