/*
 * Child-process entry of one consumer session (see host.ts): opens one consumer, consumes the
 * queues the parent fills, reports each round, and exits after `close`.
 */
import type { ConsumerSession } from './consumers.js';
import { openConsumer } from './consumers.js';
import type { ConsumerHostReply, ConsumerHostRequest } from './host.js';

let session: ConsumerSession | undefined;
let closing = false;

// A parent that went away (Ctrl-C, kill) takes its consumers with it.
process.on('disconnect', () => process.exit(closing ? 0 : 1));

const reply = (message: ConsumerHostReply) => process.send?.(message);

process.on('message', (request: ConsumerHostRequest) => {
  void handle(request).catch((error: unknown) => {
    reply({
      type: 'error',
      message: error instanceof Error ? (error.stack ?? error.message) : String(error),
    });
  });
});

async function handle(request: ConsumerHostRequest): Promise<void> {
  switch (request.type) {
    case 'open':
      session = await openConsumer(request.init);
      reply({ type: 'opened' });
      return;
    case 'round':
      if (!session) throw new Error('round before open');
      reply({ type: 'round', result: await session.round(request.request) });
      return;
    case 'close': {
      const end = session ? await session.close() : { maxRssBytes: 0 };
      closing = true;
      reply({ type: 'closed', end });
      process.disconnect?.();
      return;
    }
  }
}
