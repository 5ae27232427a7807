import { Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { withIdempotencyKey } from './callKey.js';

let made = 0;
const newKey = () => `key-${++made}`;

describe('withIdempotencyKey', () => {
  it('adds a new key to a copy, leaving the caller’s metadata as it was', () => {
    const callers = new Metadata();
    callers.set('tenant', 'acme');
    const first = withIdempotencyKey(callers, 'idempotency-key', newKey);
    const second = withIdempotencyKey(callers, 'idempotency-key', newKey);
    expect(first.get('idempotency-key')).toHaveLength(1);
    expect(first.get('idempotency-key')).not.toEqual(second.get('idempotency-key'));
    expect(first.get('tenant')).toEqual(['acme']);
    expect(callers.get('idempotency-key')).toEqual([]);
  });

  it('keeps a key the caller set', () => {
    const callers = new Metadata();
    callers.set('x-request-id', 'order-42');
    expect(withIdempotencyKey(callers, 'x-request-id', newKey).get('x-request-id')).toEqual([
      'order-42',
    ]);
  });
});
