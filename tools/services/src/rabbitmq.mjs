// @ts-check
// RabbitMQ: use the one that runs; else start the installed Debian server (`rabbitmq-server
// -detached`, needs root) and record the pid of its Erlang VM so `down` can stop exactly that;
// install the package first when missing (as root).
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { aptInstall, canAptInstall } from './apt.mjs';
import { ServiceError } from './errors.mjs';
import { run, which } from './exec.mjs';
import { answers, ensureManaged, stopManaged } from './lifecycle.mjs';
import { ensureDir } from './paths.mjs';
import { writePidFile } from './pidfile.mjs';
import { probeAmqp } from './probes/amqp.mjs';
import { statusOf } from './status.mjs';
import { redactUrl } from './urls.mjs';

const ID = 'rabbitmq';
/** Appears in the command line of RabbitMQ's Erlang VM (beam.smp ... -s rabbit boot). */
const MARKER = '-s rabbit boot';
const INSTALL_HINT =
  'install RabbitMQ: `sudo apt-get install -y rabbitmq-server` (Debian/Ubuntu) or `brew install rabbitmq` (macOS); ' +
  'or run `docker compose up -d --wait rabbitmq`; or set AMQP_URL to a running broker';

/** @param {import('./lifecycle.mjs').Context} ctx */
function spec(ctx) {
  const url = new URL(ctx.urls.amqp);
  return {
    service: /** @type {const} */ ('rabbitmq'),
    id: ID,
    address: redactUrl(ctx.urls.amqp),
    probe: () => probeAmqp(ctx.urls.amqp),
    port: Number(url.port || 5672),
  };
}

/** Newest node log of a Debian RabbitMQ (rabbit@<host>.log), for error messages. */
function nodeLogFile() {
  const dir = '/var/log/rabbitmq';
  try {
    const logs = readdirSync(dir)
      .filter((name) => /^rabbit@[^_]+\.log$/.test(name))
      .map((name) => join(dir, name));
    return logs.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  } catch {
    return undefined;
  }
}

/**
 * Pid of the running node's Erlang VM, asked from the node itself.
 * @param {import('./lifecycle.mjs').Context} ctx
 */
async function nodePid(ctx) {
  const ctl = which('rabbitmqctl');
  if (!ctl) return null;
  const { code, output } = await run(ctl, ['eval', 'os:getpid().'], {
    logFile: join(ctx.dirs.logs, 'rabbitmq.log'),
    timeoutMs: 30_000,
  });
  const pid = code === 0 ? Number(/"(\d+)"/.exec(output)?.[1]) : Number.NaN;
  return Number.isInteger(pid) && pid > 1 ? pid : null;
}

/** @type {import('./drivers.mjs').ServiceDriver} */
export const rabbitmqDriver = {
  name: 'rabbitmq',
  async ensure(ctx) {
    const base = spec(ctx);
    return ensureManaged(ctx, {
      ...base,
      ports: [{ host: '127.0.0.1', port: base.port }],
      async start() {
        const installed = () => which('rabbitmq-server') !== null;
        if (!installed() && ctx.allowInstall && canAptInstall()) {
          await aptInstall('rabbitmq', ['rabbitmq-server'], installed, ctx.dirs, ctx.log);
          if (await answers(base.probe)) {
            return { isAlive: () => true, detail: 'started by its Debian package' };
          }
        }
        const server = which('rabbitmq-server');
        if (!server) {
          throw new ServiceError(
            'rabbitmq',
            'RabbitMQ is not running and rabbitmq-server is not installed',
            {
              hint: INSTALL_HINT,
            },
          );
        }
        if (process.getuid?.() !== 0) {
          throw new ServiceError(
            'rabbitmq',
            'RabbitMQ is installed but not running, and starting it needs root',
            {
              hint: 'start it: `sudo rabbitmq-server -detached` (or `sudo systemctl start rabbitmq-server`); or set AMQP_URL',
            },
          );
        }
        ctx.log('rabbitmq: starting the installed server (rabbitmq-server -detached)...');
        const logFile = join(ensureDir(ctx.dirs.logs), 'rabbitmq.log');
        const { code } = await run(server, ['-detached'], { logFile, timeoutMs: 60_000 });
        if (code !== 0) {
          throw new ServiceError(
            'rabbitmq',
            `rabbitmq-server -detached failed (exit ${code}); see ${logFile}`,
          );
        }
        const nodeLog = nodeLogFile();
        return {
          isAlive: () => true,
          ...(nodeLog ? { logFile: nodeLog } : {}),
          detail: '',
          async afterReady() {
            const pid = await nodePid(ctx);
            if (pid === null) {
              ctx.log('rabbitmq: started, but its pid is unknown: `down` will leave it running');
              return 'pid unknown';
            }
            writePidFile(ctx.dirs.run, {
              pid,
              service: ID,
              marker: MARKER,
              startedAt: new Date().toISOString(),
              ...(nodeLog ? { logFile: nodeLog } : {}),
            });
            return `pid ${pid}`;
          },
        };
      },
    });
  },
  async stop(ctx) {
    // RabbitMQ shuts down cleanly on SIGTERM; give it time to close its queues.
    const outcome = await stopManaged(ctx, ID, 60_000);
    return outcome ? [outcome] : [];
  },
  status(ctx) {
    return statusOf(ctx, { ...spec(ctx), ids: [ID] });
  },
};
