/**
 * Entry point of a consumer process. The parent sends `{ type: 'start', config }` over IPC; the
 * child answers `ready` once subscribed. `stop` drains and exits; `cut` cuts the transport's TCP
 * connections (Kafka's F04). SIGKILL needs no cooperation.
 */
import { type RunningWorker, startWorker, type WorkerConfig } from './worker.js';

export type ParentMessage =
  | { type: 'start'; config: WorkerConfig }
  | { type: 'stop' }
  | { type: 'cut' };

export type ChildMessage =
  | { type: 'ready' }
  | { type: 'cut'; sockets: number }
  | { type: 'failed'; error: string };

let worker: RunningWorker | undefined;
const send = (message: ChildMessage) => process.send?.(message);

process.on('message', (message: ParentMessage) => {
  void (async () => {
    try {
      if (message.type === 'start') {
        worker = await startWorker(message.config);
        send({ type: 'ready' });
      } else if (message.type === 'cut') {
        send({ type: 'cut', sockets: worker?.cutConnections() ?? 0 });
      } else {
        await worker?.stop();
        process.exit(0);
      }
    } catch (error) {
      send({ type: 'failed', error: String((error as Error)?.stack ?? error) });
      process.exit(1);
    }
  })();
});
process.on('disconnect', () => process.exit(0));
