/* Child-process entry of the gRPC load client (see ../childSession.ts). */
import { serveSession } from '../serveSession.js';
import { openGrpcClient } from './client.js';

serveSession(openGrpcClient, { maxRssBytes: 0 });
