import { status } from '@grpc/grpc-js';
import { InvalidOptionsError } from '@idemq/core';
import { describe, expect, it } from 'vitest';
import {
  IDEMPOTENCY_CLIENT_DEFAULTS,
  type IdempotencyClientOptions,
  resolveClientSettings,
} from './options.js';

function problemsOf(options: unknown): readonly string[] {
  try {
    resolveClientSettings(options as IdempotencyClientOptions);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidOptionsError);
    expect((error as InvalidOptionsError).code).toBe('IDEMQ_ERR_OPTIONS_INVALID');
    return (error as InvalidOptionsError).problems;
  }
  return [];
}

describe('resolveClientSettings', () => {
  it('fills in the defaults', () => {
    const settings = resolveClientSettings();
    expect(settings).toMatchObject({
      metadataKey: 'idempotency-key',
      maxAttempts: 5,
      baseDelayMs: 100,
      maxDelayMs: 5000,
    });
    expect([...settings.retryOn]).toEqual([status.ABORTED, status.UNAVAILABLE]);
    expect(settings.newKey()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/);
    expect(Object.isFrozen(IDEMPOTENCY_CLIENT_DEFAULTS)).toBe(true);
    expect(Object.isFrozen(IDEMPOTENCY_CLIENT_DEFAULTS.retryOn)).toBe(true);
  });

  it('takes valid options, an empty retryOn included', () => {
    const settings = resolveClientSettings({
      metadataKey: 'x-request-id',
      newKey: () => 'k',
      maxAttempts: 1,
      retryOn: [],
      baseDelayMs: 0,
      maxDelayMs: 0,
    });
    expect(settings.retryOn.size).toBe(0);
    expect(settings.newKey()).toBe('k');
  });

  it('reports every bad option in one error', () => {
    const problems = problemsOf({
      metadataKey: 'Idempotency-Key',
      newKey: 'uuid',
      maxAttempts: 0,
      retryOn: [status.OK, 17],
      baseDelayMs: -1,
      maxDelayMs: 1.5,
    });
    expect(problems).toHaveLength(6);
    for (const name of [
      'metadataKey',
      'newKey',
      'maxAttempts',
      'retryOn',
      'baseDelayMs',
      'maxDelayMs',
    ]) {
      expect(
        problems.some((p) => p.startsWith(name)),
        name,
      ).toBe(true);
    }
  });

  it('refuses metadata names a key cannot travel in', () => {
    for (const metadataKey of ['', 'grpc-key', 'key-bin', 'a key']) {
      expect(problemsOf({ metadataKey }), metadataKey).toHaveLength(1);
    }
  });

  it('refuses options that are not an object', () => {
    expect(problemsOf(null)).toEqual(['options must be an object']);
  });
});
