// @ts-check
// Kafka: a single combined broker+controller in KRaft mode (static quorum), run as a background
// JVM from jars that Maven resolves. Fresh, empty cluster on every start: data is wiped, storage
// formatted with a new cluster id, then `java ... kafka.Kafka server.properties`.
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnDaemon } from './daemon.mjs';
import { ServiceError } from './errors.mjs';
import { run } from './exec.mjs';
import { requireJava } from './java.mjs';
import { ensureManaged, stopManaged } from './lifecycle.mjs';
import { formatBlock, tailFile } from './logTail.mjs';
import { resolveRuntime } from './maven.mjs';
import { brokersDir, ensureDir } from './paths.mjs';
import { isRunning } from './pidfile.mjs';
import { probeKafka } from './probes/kafka.mjs';
import { statusOf } from './status.mjs';
import { isExternal } from './urls.mjs';

const ID = 'kafka';
export const DEFAULT_KAFKA_VERSION = '3.9.1';
/**
 * kafka-run-class.sh's GC flags, plus C1-only JIT: on busy cores the broker starts faster
 * without C2 (docs/services.md), and a test broker needs no peak throughput.
 */
const JVM_FLAGS = [
  '-XX:TieredStopAtLevel=1',
  '-XX:+UseG1GC',
  '-XX:MaxGCPauseMillis=20',
  '-XX:InitiatingHeapOccupancyPercent=35',
  '-XX:+ExplicitGCInvokesConcurrent',
  '-XX:+ExitOnOutOfMemoryError',
  '-Djava.awt.headless=true',
];
const DEFAULT_HEAP = '-Xms128m -Xmx512m';

/** KAFKA_VERSION, default 3.9.1; 4.x switches to the log4j2 POM and config. */
function kafkaVersion() {
  const version = process.env.KAFKA_VERSION?.trim() || DEFAULT_KAFKA_VERSION;
  if (!/^\d+\.\d+\.\d+$/.test(version)) {
    throw new ServiceError('kafka', `KAFKA_VERSION must look like 3.9.1, not "${version}"`);
  }
  const major = Number(version.split('.')[0]);
  if (major < 3 || (major === 3 && Number(version.split('.')[1]) < 7)) {
    throw new ServiceError(
      'kafka',
      `KAFKA_VERSION ${version}: only 3.7+ and 4.x are supported here`,
    );
  }
  return { version, major };
}

/**
 * A random cluster id in Kafka's format (16 bytes, base64url, 22 chars). One starting with "-"
 * would be read as an option by the storage tool, so draw again.
 */
function newClusterId() {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

/** @param {import('./lifecycle.mjs').Context} ctx */
function spec(ctx) {
  return {
    service: /** @type {const} */ ('kafka'),
    id: ID,
    address: ctx.urls.kafkaBrokers.join(','),
    // Our own broker must also have its group coordinator up; another one only has to answer.
    probe: () => probeKafka(ctx.urls.kafkaBrokers, { groupCoordinator: !isExternal('kafka') }),
  };
}

/** @param {import('./lifecycle.mjs').Context} ctx */
async function startKafka(ctx) {
  const { version, major } = kafkaVersion();
  const java = await requireJava('kafka', major >= 4 ? 17 : 11);
  const layout = major >= 4 ? 'kafka-4' : 'kafka-3.9';
  const libDir = await resolveRuntime({
    service: 'kafka',
    id: `kafka-${version}`,
    pom: join(brokersDir, layout, 'pom.xml'),
    properties: { 'kafka.version': version },
    dirs: ctx.dirs,
    log: ctx.log,
  });
  const logConfig =
    major >= 4
      ? `-Dlog4j2.configurationFile=${join(brokersDir, 'kafka-4', 'log4j2.properties')}`
      : `-Dlog4j.configuration=file:${join(brokersDir, 'kafka-3.9', 'log4j.properties')}`;
  const home = ensureDir(join(ctx.dirs.root, 'kafka'));
  const dataDir = join(home, 'data');
  rmSync(dataDir, { recursive: true, force: true });
  const properties = join(home, 'server.properties');
  const template = readFileSync(join(brokersDir, 'kafka', 'server.properties'), 'utf8');
  writeFileSync(properties, `${template}\n# added by tools/services\nlog.dirs=${dataDir}\n`);
  const logFile = join(ensureDir(ctx.dirs.logs), 'kafka.log');
  const formatLog = join(ctx.dirs.logs, 'kafka-storage.log');
  const classpath = join(libDir, '*');

  const format = await run(
    java,
    [
      '-Xmx256m',
      '-XX:TieredStopAtLevel=1',
      logConfig,
      '-cp',
      classpath,
      'kafka.tools.StorageTool',
      'format',
      '-t',
      newClusterId(),
      '-c',
      properties,
    ],
    // its own log: it prints the whole broker config, which would bury the broker's own lines
    { logFile: formatLog, timeoutMs: 120_000 },
  );
  if (format.code !== 0) {
    throw new ServiceError(
      'kafka',
      `kafka-storage format failed (exit ${format.code})\n${formatBlock(`  last lines of ${formatLog}:`, tailFile(formatLog, 25))}`,
    );
  }

  ctx.log(`kafka: starting Kafka ${version} (KRaft, single node)...`);
  const heap = (process.env.KAFKA_HEAP_OPTS?.trim() || DEFAULT_HEAP).split(/\s+/);
  const record = spawnDaemon({
    id: ID,
    command: java,
    // the properties path (unique to this .services/ dir) marks the process as ours
    args: [...heap, ...JVM_FLAGS, logConfig, '-cp', classpath, 'kafka.Kafka', properties],
    marker: properties,
    logFile,
    runDir: ctx.dirs.run,
    cwd: home,
    version: `Kafka ${version}`,
  });
  return {
    isAlive: () => isRunning(record),
    logFile,
    detail: `pid ${record.pid}, Kafka ${version}`,
  };
}

/** @type {import('./drivers.mjs').ServiceDriver} */
export const kafkaDriver = {
  name: 'kafka',
  async ensure(ctx) {
    return ensureManaged(ctx, {
      ...spec(ctx),
      ports: [
        { host: '127.0.0.1', port: 9092 },
        { host: '127.0.0.1', port: 9093 },
      ],
      start: () => startKafka(ctx),
    });
  },
  async stop(ctx) {
    // Controlled shutdown of a single node takes a few seconds.
    const outcome = await stopManaged(ctx, ID, 30_000);
    return outcome ? [outcome] : [];
  },
  status(ctx) {
    return statusOf(ctx, { ...spec(ctx), ids: [ID] });
  },
};
