// @ts-check
// Addresses of the services: environment variables when set (meaning "someone else runs it"),
// loopback defaults otherwise. Always 127.0.0.1, never "localhost": Node >= 17 may resolve
// localhost to ::1 while the brokers listen on IPv4 only.

/** @typedef {'redis' | 'rabbitmq' | 'kafka' | 'sqs' | 'postgres' | 'redis-cluster'} ServiceName */

/** @type {readonly ServiceName[]} */
export const SERVICE_NAMES = ['redis', 'rabbitmq', 'kafka', 'sqs', 'postgres', 'redis-cluster'];

/** Environment variable that, when set, points a service elsewhere. */
export const ENV_BY_SERVICE = /** @type {const} */ ({
  redis: 'REDIS_URL',
  rabbitmq: 'AMQP_URL',
  kafka: 'KAFKA_BROKERS',
  sqs: 'SQS_ENDPOINT',
  postgres: 'POSTGRES_URL',
  'redis-cluster': 'REDIS_CLUSTER_NODES',
});

export const DEFAULTS = /** @type {const} */ ({
  redis: 'redis://127.0.0.1:6379',
  amqp: 'amqp://guest:guest@127.0.0.1:5672',
  kafkaBrokers: '127.0.0.1:9092',
  sqsEndpoint: 'http://127.0.0.1:9324',
  sqsRegion: 'us-east-1',
  postgres: 'postgres://postgres@127.0.0.1:5432/postgres',
  redisClusterNodes: '127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003',
});

/**
 * @typedef {object} HostPort
 * @property {string} host
 * @property {number} port
 */

/**
 * @typedef {object} ServiceUrls
 * @property {string} redis               REDIS_URL
 * @property {string} amqp                AMQP_URL
 * @property {string[]} kafkaBrokers      KAFKA_BROKERS, comma-separated host:port
 * @property {string} sqsEndpoint         SQS_ENDPOINT
 * @property {string} sqsRegion           AWS_REGION
 * @property {string} postgres            POSTGRES_URL (else the default, on $POSTGRES_PORT if set)
 * @property {HostPort[]} redisClusterNodes REDIS_CLUSTER_NODES, comma-separated host:port
 */

/**
 * Parses "host:port,host:port" (a bare host gets defaultPort).
 * @param {string} list
 * @param {number} defaultPort
 * @returns {HostPort[]}
 */
export function parseHostPorts(list, defaultPort) {
  return list
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0)
    .map((item) => {
      const match = /^\[?([^\]]+?)\]?(?::(\d+))?$/.exec(item);
      if (!match?.[1]) throw new Error(`Not a host:port address: "${item}"`);
      return { host: match[1], port: match[2] ? Number(match[2]) : defaultPort };
    });
}

/**
 * @param {string | undefined} value
 * @returns {string | undefined} the value, unless empty or blank
 */
function nonBlank(value) {
  return value && value.trim().length > 0 ? value.trim() : undefined;
}

/**
 * The default PostgreSQL URL, on POSTGRES_PORT when set (the port our own server, or the Docker
 * container, listens on).
 * @param {string | undefined} port
 */
function defaultPostgresUrl(port) {
  if (port === undefined) return DEFAULTS.postgres;
  const number = Number(port);
  if (!Number.isInteger(number) || number < 1 || number > 65535) {
    throw new Error(`POSTGRES_PORT must be a port number, not "${port}"`);
  }
  return DEFAULTS.postgres.replace(':5432/', `:${number}/`);
}

/**
 * The addresses tests and demos should use: env vars when set, loopback defaults otherwise.
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {ServiceUrls}
 */
export function serviceUrls(env = process.env) {
  return {
    redis: nonBlank(env.REDIS_URL) ?? DEFAULTS.redis,
    amqp: nonBlank(env.AMQP_URL) ?? DEFAULTS.amqp,
    kafkaBrokers: parseHostPorts(nonBlank(env.KAFKA_BROKERS) ?? DEFAULTS.kafkaBrokers, 9092).map(
      ({ host, port }) => `${host}:${port}`,
    ),
    sqsEndpoint: nonBlank(env.SQS_ENDPOINT) ?? DEFAULTS.sqsEndpoint,
    sqsRegion: nonBlank(env.AWS_REGION) ?? DEFAULTS.sqsRegion,
    postgres: nonBlank(env.POSTGRES_URL) ?? defaultPostgresUrl(nonBlank(env.POSTGRES_PORT)),
    redisClusterNodes: parseHostPorts(
      nonBlank(env.REDIS_CLUSTER_NODES) ?? DEFAULTS.redisClusterNodes,
      6379,
    ),
  };
}

/**
 * True when the service's env var is set: it runs elsewhere and must not be started here.
 * @param {ServiceName} name
 * @param {NodeJS.ProcessEnv} [env]
 */
export function isExternal(name, env = process.env) {
  return nonBlank(env[ENV_BY_SERVICE[name]]) !== undefined;
}

/**
 * One-line address of a service, for messages.
 * @param {ServiceName} name
 * @param {ServiceUrls} urls
 */
export function describeAddress(name, urls) {
  switch (name) {
    case 'redis':
      return redactUrl(urls.redis);
    case 'rabbitmq':
      return redactUrl(urls.amqp);
    case 'kafka':
      return urls.kafkaBrokers.join(',');
    case 'sqs':
      return urls.sqsEndpoint;
    case 'postgres':
      return redactUrl(urls.postgres);
    case 'redis-cluster':
      return urls.redisClusterNodes.map(({ host, port }) => `${host}:${port}`).join(',');
  }
}

/**
 * Hides a password in a URL so that it can be printed.
 * @param {string} url
 */
export function redactUrl(url) {
  try {
    const parsed = new URL(url);
    if (parsed.password && parsed.password !== 'guest') parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}
