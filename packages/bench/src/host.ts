import { childSession, type SessionHandle } from './childSession.js';
import {
  type RoundRequest,
  type RoundResult,
  Session,
  type SessionEnd,
  type SessionInit,
} from './session.js';

/** A store-bench session, wherever it runs. */
export type SessionHost = SessionHandle<RoundRequest, RoundResult, SessionEnd>;

/** Runs the session in this process (tests; RSS is then shared). */
export function openInline(init: SessionInit): Promise<SessionHost> {
  return Session.open(init);
}

/** Runs the session in a child process of its own (worker.ts): its peak RSS is its own. */
export function openChild(init: SessionInit): Promise<SessionHost> {
  return childSession(new URL('./worker.js', import.meta.url), init);
}
