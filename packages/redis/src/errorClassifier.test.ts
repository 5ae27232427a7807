import { ErrorCodes, StoreRejectedError, StoreUnavailableError } from '@idemq/core';
import { describe, expect, it } from 'vitest';
import { classifyRecordError, classifyRedisError, unexpectedReply } from './errorClassifier.js';

/** An error reply as ioredis raises it (redis-errors' `ReplyError`), without a server. */
class ReplyError extends Error {
  override name = 'ReplyError';
}

const transient = (reason: string) => ({
  constructor: StoreUnavailableError,
  code: ErrorCodes.STORE_UNAVAILABLE,
  retriable: true,
  reason,
});
const refused = (affects: 'record' | 'store') => ({
  constructor: StoreRejectedError,
  code: ErrorCodes.STORE_REJECTED,
  retriable: false,
  affects,
});

describe('classifyRedisError: an error reply or client error → a typed store error', () => {
  const replies: [string, object][] = [
    ['LOADING Redis is loading the dataset in memory', transient('busy')],
    [
      'BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.',
      transient('busy'),
    ],
    ['TRYAGAIN Multiple keys request during rehashing of slot', transient('busy')],
    [
      'MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to no',
      transient('busy'),
    ],
    ["READONLY You can't write against a read only replica.", transient('busy')],
    ['CLUSTERDOWN The cluster is down', transient('busy')],
    ['NOREPLICAS Not enough good replicas to write.', transient('busy')],
    ["OOM command not allowed when used memory > 'maxmemory'.", transient('out-of-memory')],
    ['ERR max number of clients reached', transient('unreachable')],
    ['WRONGTYPE Operation against a key holding the wrong kind of value', refused('record')],
    ["NOPERM User app has no permissions to run the 'evalsha' command", refused('store')],
    ['NOAUTH Authentication required.', refused('store')],
    ['WRONGPASS invalid username-password pair or user is disabled.', refused('store')],
    ['NOSCRIPT No matching script. Please use EVAL.', refused('store')],
    ["CROSSSLOT Keys in request don't hash to the same slot", refused('store')],
    ['MOVED 3999 127.0.0.1:6381', refused('store')],
    ["ERR unknown command 'EVALSHA', with args beginning with: ", refused('store')],
    ["ERR wrong number of arguments for 'evalsha' command", refused('store')],
    // Redis 7: a script's own failure, not inside any one record's step.
    [
      'ERR user_script:3: attempt to compare nil with number script: 5d4c…, on @user_script:3.',
      refused('store'),
    ],
    ["ERR Error compiling script (new function): user_script:1: '=' expected", refused('store')],
    // Redis 7 keeps a wrapped command error's own code in front.
    [
      'WRONGTYPE Operation against a key holding the wrong kind of value script: 5d4c…, on @user_script:9.',
      refused('record'),
    ],
    // Before Redis 7 the code came after the script's position.
    [
      "ERR Error running script (call to f_5d4c): @user_script:9: OOM command not allowed when used memory > 'maxmemory'.",
      transient('out-of-memory'),
    ],
    // Not recognised: retried (fail-closed), as before classification existed.
    ['ERR something new the store does not know', transient('other')],
  ];

  it.each(replies)('%s', (message, expected) => {
    const cause = new ReplyError(message);
    const error = classifyRedisError('claim', cause);
    expect(error).toMatchObject(expected);
    expect(error.cause).toBe(cause);
    expect(error.message).toContain(message);
  });

  const clientErrors: [string, Error, string][] = [
    [
      'a refused connection',
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      'unreachable',
    ],
    ['a closed connection', new Error('Connection is closed.'), 'unreachable'],
    [
      'retries spent',
      Object.assign(new Error('Reached the max retries per request limit (which is 1).'), {
        name: 'MaxRetriesPerRequestError',
      }),
      'unreachable',
    ],
    ['no startup node', new Error('None of startup nodes is available'), 'unreachable'],
    ["the client's own timeout", new Error('Command timed out'), 'timeout'],
    ['anything else', new TypeError('x is not a function'), 'other'],
  ];

  it.each(clientErrors)('client error: %s', (_, cause, reason) => {
    expect(classifyRedisError('complete', cause)).toMatchObject(transient(reason));
  });

  it('returns typed errors as they are, and never shows credentials', () => {
    const typed = new StoreRejectedError('x', { affects: 'record' });
    expect(classifyRedisError('claim', typed)).toBe(typed);
    const leaky = new Error('connect to redis://app:s3cret@db.internal:6379 failed');
    expect(classifyRedisError('claim', leaky).message).not.toContain('s3cret');
    expect(classifyRedisError('claim', 'thrown string')).toMatchObject(transient('other'));
  });
});

describe('classifyRecordError: the error element a script answered for one key', () => {
  it('a Lua error on the record, or an error reply the store does not know, refuses that record', () => {
    expect(
      classifyRecordError('claim', 'user_script:40: attempt to compare nil with number'),
    ).toMatchObject(refused('record'));
    expect(classifyRecordError('complete', 'ERR value is not an integer')).toMatchObject(
      refused('record'),
    );
    expect(
      classifyRecordError(
        'claim',
        'WRONGTYPE Operation against a key holding the wrong kind of value',
      ),
    ).toMatchObject(refused('record'));
  });

  it("Redis's own codes keep their meaning inside a script", () => {
    expect(
      classifyRecordError('claim', "OOM command not allowed when used memory > 'maxmemory'."),
    ).toMatchObject(transient('out-of-memory'));
    expect(classifyRecordError('claim', 'NOPERM No permissions to access a key')).toMatchObject(
      refused('store'),
    );
  });
});

describe('unexpectedReply', () => {
  it('is a refusal of the record or of the store, showing what came back', () => {
    const error = unexpectedReply('claim', ['weird', 1], 'record');
    expect(error).toMatchObject(refused('record'));
    expect(error.message).toContain('["weird",1]');
    expect(unexpectedReply('complete', 'OK', 'store')).toMatchObject(refused('store'));
  });
});
