import { ensureServices } from '@idemq/services';

// Real Redis standalone and a 3-master Cluster on 127.0.0.1 (or REDIS_URL / REDIS_CLUSTER_NODES):
// started when missing, never skipped.
export default async function setup(): Promise<void> {
  await ensureServices(['redis', 'redis-cluster']);
}
