import { describe, expect, it } from 'vitest';
import { killChildren } from './children.js';
import { childSession } from './childSession.js';

const worker = new URL('../test/fixtures/sessionWorker.mjs', import.meta.url);
const open = () =>
  childSession<null, number | 'exit', number, { maxRssBytes: number }>(worker, null);

describe('childSession', () => {
  it('runs rounds in the child and closes it', async () => {
    const session = await open();
    expect(await session.round(21)).toBe(42);
    expect(await session.round(2)).toBe(4);
    expect(await session.close()).toEqual({ maxRssBytes: 1 });
  });

  it('rejects the round a dying child leaves unanswered, and every later one', async () => {
    const session = await open();
    await expect(session.round('exit')).rejects.toThrow(/exited with 3 before answering round/);
    await expect(session.round(1)).rejects.toThrow(/gone, cannot round/);
  });

  // Ctrl-C: the CLI kills every child, then the run unwinds; a send to a dead child used to
  // raise ERR_IPC_CHANNEL_CLOSED as an unhandled 'error' event and crash the parent.
  it('rejects, not crashes, when the children were killed; later children die at once', async () => {
    const session = await open();
    killChildren();
    await expect(session.round(1)).rejects.toThrow();
    // Killed at birth: either its exit or the failed send of `open` comes first.
    await expect(open()).rejects.toThrow(
      /bench session (exited with .* before answering open|is gone, cannot open)/,
    );
  });
});
