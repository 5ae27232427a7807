/* Child-process entry of one gRPC server (see ../childSession.ts). */
import { serveSession } from '../serveSession.js';
import { openGrpcServer } from './servers.js';

serveSession(openGrpcServer, { maxRssBytes: 0 });
