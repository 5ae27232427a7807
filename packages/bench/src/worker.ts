/*
 * Child-process entry of one bench session (see host.ts): opens one contender, runs the rounds
 * the parent asks for, reports each, and exits after `close`.
 */
import type { HostReply, HostRequest } from './host.js';
import { Session } from './session.js';

let session: Session | undefined;
let closing = false;

// A parent that went away (Ctrl-C, kill) takes its sessions with it.
process.on('disconnect', () => process.exit(closing ? 0 : 1));

const reply = (message: HostReply) => process.send?.(message);

process.on('message', (request: HostRequest) => {
  void handle(request).catch((error: unknown) => {
    reply({
      type: 'error',
      message: error instanceof Error ? (error.stack ?? error.message) : String(error),
    });
  });
});

async function handle(request: HostRequest): Promise<void> {
  switch (request.type) {
    case 'open':
      session = await Session.open(request.init);
      reply({ type: 'opened' });
      return;
    case 'round': {
      if (!session) throw new Error('round before open');
      reply({ type: 'round', result: await session.round(request.run, request.ids) });
      return;
    }
    case 'close': {
      const end = session ? await session.close() : { maxRssBytes: 0 };
      closing = true;
      reply({ type: 'closed', end });
      process.disconnect?.();
      return;
    }
  }
}
