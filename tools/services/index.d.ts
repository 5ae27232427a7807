// Public types of @idemq/services (the implementation is plain ESM JavaScript in src/).

/** The services this package can provide. */
export type ServiceName = 'redis' | 'rabbitmq' | 'kafka' | 'sqs' | 'redis-cluster';

export declare const SERVICE_NAMES: readonly ServiceName[];

/** What `services.mjs up` starts when given no names. */
export declare const DEFAULT_SERVICES: readonly ['redis', 'rabbitmq', 'kafka', 'sqs'];

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
  /** May run `apt-get install` (as root) for a missing Redis/RabbitMQ (default: true unless IDEMQ_SERVICES_NO_INSTALL=1). */
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
 * set are only checked; the others are used when already running, else started (Redis/RabbitMQ
 * from Debian packages, Kafka/ElasticMQ as JVMs from Maven Central, the cluster as three
 * redis-server processes). Rejects with a ServiceError that names what to install when a
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
