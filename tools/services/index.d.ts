// Public types of @idemq/services (the implementation is plain ESM JavaScript in src/).

/** The services this package can provide. */
export type ServiceName = 'redis' | 'rabbitmq' | 'kafka' | 'sqs' | 'postgres' | 'redis-cluster';

export declare const SERVICE_NAMES: readonly ServiceName[];

/** What `services.mjs up` starts when given no names. */
export declare const DEFAULT_SERVICES: readonly ['redis', 'rabbitmq', 'kafka', 'sqs', 'postgres'];

/** The queues pre-created by tools/brokers/elasticmq/elasticmq.conf. */
export declare const SQS_QUEUES: readonly [
  'idemq-demo',
  'idemq-demo-dlq',
  'idemq-demo.fifo',
  'idemq-demo-dlq.fifo',
];

export interface HostPort {
  host: string;
  port: number;
}

/** Where each service answers: from the environment when set, loopback defaults otherwise. */
export interface ServiceUrls {
  /** REDIS_URL, default redis://127.0.0.1:6379 */
  redis: string;
  /** AMQP_URL, default amqp://guest:guest@127.0.0.1:5672 */
  amqp: string;
  /** KAFKA_BROKERS (comma-separated host:port), default ['127.0.0.1:9092'] */
  kafkaBrokers: string[];
  /** SQS_ENDPOINT, default http://127.0.0.1:9324 */
  sqsEndpoint: string;
  /** AWS_REGION, default us-east-1 */
  sqsRegion: string;
  /**
   * POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/postgres (trust, no password); the
   * default's port is $POSTGRES_PORT when set.
   */
  postgres: string;
  /** REDIS_CLUSTER_NODES (comma-separated host:port), default 127.0.0.1:7001-7003 */
  redisClusterNodes: HostPort[];
}

/** The addresses tests and demos should use (env vars or defaults). Starts nothing. */
export declare function serviceUrls(env?: NodeJS.ProcessEnv): ServiceUrls;

export interface ServiceOptions {
  /** Readiness budget for each service that is started (default 120 s, or $IDEMQ_SERVICES_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Progress messages (default: stderr, prefixed with "[services]"). */
  log?: (message: string) => void;
  /** May run `apt-get install` (as root) for a missing Redis/RabbitMQ/PostgreSQL (default: true unless IDEMQ_SERVICES_NO_INSTALL=1). */
  allowInstall?: boolean;
}

export interface EnsureOutcome {
  service: ServiceName;
  address: string;
  /** started: by this call; already-running: found answering; external: its env var points elsewhere */
  outcome: 'started' | 'already-running' | 'external';
  /** Time this call spent on the service. */
  ms: number;
  /** e.g. "pid 1234, Kafka 3.9.1" or "not started by services.mjs" */
  detail: string;
}

export interface EnsureResult extends ServiceUrls {
  outcomes: EnsureOutcome[];
}

/**
 * Makes the named services answer a real request on their addresses. Services whose env var is
 * set are only checked; the others are used when already running, else started (Redis/RabbitMQ/
 * PostgreSQL from Debian packages, Kafka/ElasticMQ as JVMs from Maven Central, the cluster as
 * three redis-server processes). Rejects with a ServiceError that names what to install when a
 * service can be neither found nor started. Started services keep running after the caller
 * exits; stopServices() (or `services.mjs down`) stops them.
 */
export declare function ensureServices(
  names?: readonly ServiceName[],
  options?: ServiceOptions,
): Promise<EnsureResult>;

export interface StopOutcome {
  /** pid file id, e.g. "kafka" or "redis-cluster-7001" */
  id: string;
  outcome: 'stopped' | 'killed' | 'not-running';
  pid?: number;
}

/** Stops only the processes that `up`/ensureServices started (per their pid files). */
export declare function stopServices(
  names?: readonly ServiceName[],
  options?: ServiceOptions,
): Promise<{ service: ServiceName; stopped: StopOutcome[] }[]>;

export interface ServiceStatus {
  service: ServiceName;
  address: string;
  /** Answered a real request just now. */
  ready: boolean;
  /** Who runs it, as far as can be told. */
  managedBy: string;
  /** Processes that `up` started and that still run. */
  pids: number[];
  version?: string;
  /** Why it is not ready. */
  error?: string;
}

export declare function servicesStatus(
  names?: readonly ServiceName[],
  options?: ServiceOptions,
): Promise<ServiceStatus[]>;

/** A service could not be provided; `hint` says what to install or run. */
export declare class ServiceError extends Error {
  constructor(service: string, message: string, extra?: { hint?: string; cause?: unknown });
  readonly service: string;
  readonly hint: string | undefined;
}

export interface PostgresServerOptions {
  /** Default: a free port. */
  port?: number;
  /**
   * The cluster's directory. Default: a new temporary dir, removed by `stop()`. An existing
   * cluster (it has PG_VERSION) is started as it is; otherwise initdb makes one.
   */
  dataDir?: string;
}

/** A private PostgreSQL started by `startPostgresServer`. */
export interface PostgresServer {
  readonly port: number;
  /** postgres://postgres@127.0.0.1:<port>/postgres (trust: no password) */
  readonly url: string;
  readonly dataDir: string;
  /** The server's output: <dataDir>/log/postgres.log */
  readonly logFile: string;
  /** The postmaster's pid while it runs. */
  readonly pid: number | undefined;
  /**
   * Sends `signal` to the postmaster and resolves once it exited: SIGKILL (default) as a crash
   * would, SIGINT for a fast shutdown, SIGQUIT for an immediate one.
   */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /**
   * Fast shutdown if it runs, then starts again on the same port and data and resolves once it
   * answers `SELECT 1` (after a kill, once crash recovery has replayed the WAL).
   */
  restart(): Promise<void>;
  /** Fast shutdown; removes the data dir if `startPostgresServer` created it. */
  stop(): Promise<void>;
}

/**
 * Starts a private PostgreSQL (initdb with trust auth, then postgres on 127.0.0.1 only, fsync on)
 * as a child of this process, for tests that kill or restart a server without disturbing the
 * shared one. As root it runs as the `postgres` user. Resolves once it answers `SELECT 1`.
 * @example
 * const server = await startPostgresServer({ port: 55432 });
 * await server.kill(); // SIGKILL
 * await server.restart(); // crash recovery, then it answers again
 * await server.stop();
 */
export declare function startPostgresServer(
  options?: PostgresServerOptions,
): Promise<PostgresServer>;

/** How a script run by `runScript` ended. */
export interface ScriptOutcome {
  /** Exit code; `null` when killed (after the timeout). */
  code: number | null;
  stdout: string;
  stderr: string;
  elapsedMs: number;
  timedOut: boolean;
}

/**
 * Runs `source` as an ES module in a new Node process, as a user's short script would run, from
 * `cwd` (relative imports resolve there, and may name `.ts` sources). Resolves once it exited,
 * or after `timeoutMs` (default 60 s), when it is killed and `timedOut` is true.
 */
export declare function runScript(
  source: string,
  options: { cwd: string; timeoutMs?: number; env?: NodeJS.ProcessEnv },
): Promise<ScriptOutcome>;

/** A TCP port free on 127.0.0.1 right now. */
export declare function freePort(): Promise<number>;

/**
 * A TCP proxy on a free 127.0.0.1 port in front of a service: `cut(ms)` resets every open
 * connection and refuses new ones for `ms`, as a restarting broker would.
 */
export declare class TcpProxy {
  /** Use `TcpProxy.start`, which finds a port and listens. */
  constructor(server: import('node:net').Server, port: number);
  static start(targetHost: string, targetPort: number): Promise<TcpProxy>;
  readonly port: number;
  /** How many times `cut` was called or `cutMidStream` cut a connection. */
  cuts: number;
  cut(downMs: number): void;
  /**
   * Ends the connection that next receives more than `bytes` bytes at once from the target,
   * after passing on only the first `bytes`: a reply cut short, then the connection closed.
   * Resolves once it happened.
   */
  cutMidStream(bytes: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * A socket factory that remembers the sockets it opened (kafkajs's `socketFactory`, say), so a
 * test can cut them all at once as a network failure would.
 */
export declare function trackedSockets(): {
  socketFactory: (target: {
    host: string;
    port: number;
    onConnect: () => void;
  }) => import('node:net').Socket;
  /** Destroys every open socket; returns how many there were. */
  cut(): number;
};
