import type { SessionHandle, SessionReply, SessionRequest } from './childSession.js';

/**
 * The child-process side of `childSession`: opens one session with `open`, runs the rounds the
 * parent asks for, reports each, and exits after `close` (or when the parent goes away).
 */
export function serveSession<Init, Request, Result, End>(
  open: (init: Init) => Promise<SessionHandle<Request, Result, End>>,
  emptyEnd: End,
): void {
  let session: SessionHandle<Request, Result, End> | undefined;
  let closing = false;

  // A parent that went away (Ctrl-C, kill) takes its sessions with it.
  process.on('disconnect', () => process.exit(closing ? 0 : 1));

  const reply = (message: SessionReply<Result, End>) => process.send?.(message);

  const handle = async (request: SessionRequest<Init, Request>): Promise<void> => {
    switch (request.type) {
      case 'open':
        session = await open(request.init);
        reply({ type: 'opened' });
        return;
      case 'round':
        if (!session) throw new Error('round before open');
        reply({ type: 'round', result: await session.round(request.request) });
        return;
      case 'close': {
        const end = session ? await session.close() : emptyEnd;
        closing = true;
        reply({ type: 'closed', end });
        process.disconnect?.();
        return;
      }
    }
  };

  process.on('message', (request: SessionRequest<Init, Request>) => {
    void handle(request).catch((error: unknown) => {
      reply({
        type: 'error',
        message: error instanceof Error ? (error.stack ?? error.message) : String(error),
      });
    });
  });
}
