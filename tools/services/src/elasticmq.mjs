// @ts-check
// SQS: ElasticMQ as a background JVM from jars that Maven resolves, configured by
// tools/brokers/elasticmq/elasticmq.conf (loopback only, the project's queues pre-created).
import { join } from 'node:path';
import { spawnDaemon } from './daemon.mjs';
import { ServiceError } from './errors.mjs';
import { requireJava } from './java.mjs';
import { ensureManaged, stopManaged } from './lifecycle.mjs';
import { resolveRuntime } from './maven.mjs';
import { brokersDir, ensureDir } from './paths.mjs';
import { isRunning } from './pidfile.mjs';
import { probeSqs } from './probes/sqs.mjs';
import { statusOf } from './status.mjs';
import { isExternal } from './urls.mjs';

const ID = 'sqs';
export const DEFAULT_ELASTICMQ_VERSION = '1.7.1';
const DEFAULT_HEAP = '-Xms64m -Xmx256m';

/** The queues elasticmq.conf creates at start-up (keep in sync with that file). */
export const SQS_QUEUES = /** @type {const} */ ([
  'idemq-demo',
  'idemq-demo-dlq',
  'idemq-demo.fifo',
  'idemq-demo-dlq.fifo',
]);

/** @param {import('./lifecycle.mjs').Context} ctx */
function spec(ctx) {
  // Our own server must also have created the configured queues; an SQS_ENDPOINT elsewhere
  // only has to answer.
  const expected = isExternal('sqs') ? [] : SQS_QUEUES;
  return {
    service: /** @type {const} */ ('sqs'),
    id: ID,
    address: ctx.urls.sqsEndpoint,
    probe: () => probeSqs(ctx.urls.sqsEndpoint, expected),
  };
}

/** @param {import('./lifecycle.mjs').Context} ctx */
async function startElasticMq(ctx) {
  const version = process.env.ELASTICMQ_VERSION?.trim() || DEFAULT_ELASTICMQ_VERSION;
  if (!/^\d+\.\d+\.\d+$/.test(version)) {
    throw new ServiceError('sqs', `ELASTICMQ_VERSION must look like 1.7.1, not "${version}"`);
  }
  const java = await requireJava('sqs', 11);
  const libDir = await resolveRuntime({
    service: 'sqs',
    id: `elasticmq-${version}`,
    pom: join(brokersDir, 'elasticmq', 'pom.xml'),
    properties: { 'elasticmq.version': version },
    dirs: ctx.dirs,
    log: ctx.log,
  });
  const logFile = join(ensureDir(ctx.dirs.logs), 'elasticmq.log');
  const heap = (process.env.ELASTICMQ_HEAP_OPTS?.trim() || DEFAULT_HEAP).split(/\s+/);
  const marker = `-Didemq.services.dir=${ctx.dirs.root}`;
  ctx.log(`sqs: starting ElasticMQ ${version}...`);
  const record = spawnDaemon({
    id: ID,
    command: java,
    args: [
      ...heap,
      // a small heap needs no parallel collector, and C1-only JIT starts faster: both spare
      // the 2 cores while Kafka starts next to it
      '-XX:+UseSerialGC',
      '-XX:TieredStopAtLevel=1',
      '-XX:+ExitOnOutOfMemoryError',
      marker,
      `-Dconfig.file=${join(brokersDir, 'elasticmq', 'elasticmq.conf')}`,
      '-cp',
      join(libDir, '*'),
      'org.elasticmq.server.Main',
    ],
    marker,
    logFile,
    runDir: ctx.dirs.run,
    cwd: ensureDir(join(ctx.dirs.root, 'elasticmq')),
    version: `ElasticMQ ${version}`,
  });
  return {
    isAlive: () => isRunning(record),
    logFile,
    detail: `pid ${record.pid}, ElasticMQ ${version}`,
  };
}

/** @type {import('./drivers.mjs').ServiceDriver} */
export const sqsDriver = {
  name: 'sqs',
  async ensure(ctx) {
    return ensureManaged(ctx, {
      ...spec(ctx),
      ports: [{ host: '127.0.0.1', port: 9324 }],
      start: () => startElasticMq(ctx),
    });
  },
  async stop(ctx) {
    const outcome = await stopManaged(ctx, ID, 15_000);
    return outcome ? [outcome] : [];
  },
  status(ctx) {
    return statusOf(ctx, { ...spec(ctx), ids: [ID] });
  },
};
