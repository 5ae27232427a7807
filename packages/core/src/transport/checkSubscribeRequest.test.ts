import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../errors/index.js';
import { checkSubscribeRequest } from './checkSubscribeRequest.js';
import type { SubscribeRequest } from './transport.js';

const valid: SubscribeRequest = { source: 'q', maxInFlight: 8, onDelivery: () => undefined };

function problemsOf(request: unknown, limits?: { maxInFlight?: number }): readonly string[] {
  try {
    checkSubscribeRequest(request as SubscribeRequest, limits);
    return [];
  } catch (thrown) {
    expect(thrown).toBeInstanceOf(InvalidOptionsError);
    return (thrown as InvalidOptionsError).problems;
  }
}

describe('checkSubscribeRequest', () => {
  it('accepts a valid request, with or without a group and onError', () => {
    expect(problemsOf(valid)).toEqual([]);
    expect(problemsOf({ ...valid, group: 'g', onError: () => undefined })).toEqual([]);
  });

  it('lists every bad field in one error', () => {
    const problems = problemsOf({ source: '', group: 3, maxInFlight: 0, onError: 'no' });
    expect(problems.map((problem) => problem.split(' ')[0])).toEqual([
      'source',
      'group',
      'maxInFlight',
      'onDelivery',
      'onError',
    ]);
  });

  it("holds maxInFlight to the transport's ceiling", () => {
    expect(problemsOf({ ...valid, maxInFlight: 70_000 }, { maxInFlight: 65_535 })).toHaveLength(1);
    expect(problemsOf({ ...valid, maxInFlight: 65_535 }, { maxInFlight: 65_535 })).toEqual([]);
  });

  it('refuses a request that is not an object', () => {
    expect(problemsOf(undefined)).toEqual(['the request must be an object']);
  });
});
