/* Child-process entry of one consumer session (see host.ts and ../childSession.ts). */
import { serveSession } from '../serveSession.js';
import { openConsumer } from './consumers.js';

serveSession(openConsumer, { maxRssBytes: 0 });
