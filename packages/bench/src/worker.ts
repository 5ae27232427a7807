/* Child-process entry of one store-bench session (see childSession.ts and host.ts). */
import { serveSession } from './serveSession.js';
import { Session } from './session.js';

serveSession(Session.open, { maxRssBytes: 0 });
