/* Child-process entry of one HTTP server (see ../childSession.ts). */
import { serveSession } from '../serveSession.js';
import { openHttpServer } from './servers.js';

serveSession(openHttpServer, { maxRssBytes: 0 });
