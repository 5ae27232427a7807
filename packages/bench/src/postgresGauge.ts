import type { PostgresContender } from './contenders/index.js';
import {
  connectPostgres,
  otherBusyClients,
  postgresFacts,
  serverNow,
  tableBytes,
  truncateTable,
} from './postgresInfo.js';
import { postgresCpuMicros } from './postgresProcesses.js';
import type { ServerGauge } from './serverGauge.js';

/**
 * The PostgreSQL side of a session, on a connection of its own: the server's CPU time from
 * `/proc` (the postmaster and all its children; NaN when the server is not on this machine), the
 * growth of the contender's table, other clients busy during the phase, and the table emptied
 * after a round. No per-statement server counts: PostgreSQL keeps none without an extension.
 */
export async function postgresGauge(
  postgresUrl: string,
  contender: PostgresContender,
): Promise<ServerGauge> {
  const admin = await connectPostgres(postgresUrl);
  const { postmaster } = await postgresFacts(admin);
  const cpuMicros = () => (postmaster ? postgresCpuMicros(postmaster) : Number.NaN);
  return {
    async around(phase) {
      const bytes0 = await tableBytes(admin, contender.table);
      const since = await serverNow(admin);
      const cpu0 = cpuMicros();
      const value = await phase();
      const cpu1 = cpuMicros();
      const otherClients = await otherBusyClients(admin, contender.table, since);
      const bytes1 = await tableBytes(admin, contender.table);
      return {
        value,
        server: {
          commands: { total: Number.NaN, byName: {} },
          cpuMicros: cpu1 - cpu0,
          memoryBytes: bytes1 - bytes0,
          otherClients,
        },
      };
    },
    clear: () => truncateTable(admin, contender.table),
    async close() {
      await admin.end();
    },
  };
}
