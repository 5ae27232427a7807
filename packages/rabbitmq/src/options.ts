import { type Logger, silentLogger } from '@idemq/core';
import { OptionsCheck } from '@idemq/core/adapter';
import type { ChannelModel, Options } from 'amqplib';

/** The two queue types this transport declares and consumes. */
export type QueueType = 'classic' | 'quorum';

/** An amqplib connection (`ChannelModel`, what `amqplib.connect()` resolves to). */
export type AmqpConnection = ChannelModel;

export interface RabbitmqOptions {
  /**
   * `amqp://` / `amqps://` URL (vhost in the path, `?heartbeat=` etc. in the query) or amqplib's
   * connect options object. Give `url` or `connection`.
   */
  url?: string | Options.Connect;
  /**
   * Instead of `url`: a function that opens a connection (called again to reconnect; the
   * transport closes what it opened), or a connection you own (never closed by the transport,
   * and not reconnected when it dies — pass a function for that).
   */
  connection?: AmqpConnection | (() => Promise<AmqpConnection>);
  /**
   * Type of every queue the transport declares. `quorum` (RabbitMQ ≥ 3.10) counts deliveries
   * exactly (`x-delivery-count`); `classic` only flags redeliveries.
   * @default 'quorum'
   */
  queueType?: QueueType;
  /**
   * Declare the exchanges and queues the transport uses. With `false` they must exist (an
   * existing topology): the fanout exchange per destination, the queue per group bound to it,
   * the dead-letter exchange and queue, and the retry tier queues that are used.
   * @default true
   */
  declare?: boolean;
  /**
   * Dead letters of `source` go to the destination `source + deadLetterSuffix`.
   * @default '.dlq'
   */
  deadLetterSuffix?: string;
  /**
   * Name of the fanout exchange a destination is published to.
   * @default the destination's own name
   */
  exchangeName?: (destination: string) => string;
  /**
   * Name of the queue a consumer group reads from `source`.
   * @default `source` for the group `'default'`, else `${source}.${group}`
   */
  queueName?: (source: string, group: string) => string;
  /**
   * Delay tiers of `retry({ delayMs })`, in ms: a retried message waits in the queue
   * `<queue>.retry.<tier>` of the smallest tier ≥ the delay (so it never comes back early);
   * longer delays hop through the largest tier. Ascending, at least one.
   * @default RABBITMQ_DEFAULTS.retryTiersMs (100 ms … 1 h)
   */
  retryTiersMs?: readonly number[];
  /**
   * How long `subscribe()` and `publish()` wait for a (re)connection, and `publish()` keeps
   * republishing a message whose confirm was lost with its connection.
   * @default 10000
   */
  connectTimeoutMs?: number;
  /**
   * How long a publish waits for RabbitMQ's confirm before it fails as `unconfirmed` (the
   * channel stays open). A delivery's retry, release or dead-letter copy that is not confirmed
   * in time hands the original back to its queue instead of holding it; `publish()` sends again
   * while `connectTimeoutMs` lasts. A late confirm is ignored: the broker may then hold the
   * message twice, which the consumers' idempotency absorbs.
   * @default 30000
   */
  confirmTimeoutMs?: number;
  /**
   * How long RabbitMQ may take to answer a channel operation: opening a channel, declaring,
   * checking or binding a queue or exchange, setting the prefetch, starting or cancelling a
   * consumer. After it the call fails with a retriable `TransportUnavailableError` and its
   * channel is abandoned (closed without waiting). Closing a channel or the connection waits as
   * long at most (then the connection's socket is destroyed). A queue stuck on the broker's side
   * (its process blocked, a quorum queue without a leader) otherwise holds `subscribe()`,
   * `stop()`, `close()`, a re-subscription or a retry for ever.
   * @default 30000
   */
  rpcTimeoutMs?: number;
  /**
   * Reconnection backoff after a lost connection or channel: exponential from `initialDelayMs`
   * to `maxDelayMs`, with full jitter.
   * @default { initialDelayMs: 100, maxDelayMs: 5000 }
   */
  reconnect?: { initialDelayMs?: number; maxDelayMs?: number };
  /**
   * Shown as the connection's name in RabbitMQ (`connection_name` client property).
   * @default 'idemq'
   */
  connectionName?: string;
  /** Reconnections, server cancels and channel errors are logged here. @default silent */
  logger?: Logger;
}

/** Defaults of `rabbitmq()`. */
export const RABBITMQ_DEFAULTS = Object.freeze({
  queueType: 'quorum' as QueueType,
  declare: true,
  deadLetterSuffix: '.dlq',
  retryTiersMs: Object.freeze([
    100, 250, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 30_000, 60_000, 120_000, 300_000, 600_000,
    1_800_000, 3_600_000,
  ]) as readonly number[],
  connectTimeoutMs: 10_000,
  confirmTimeoutMs: 30_000,
  rpcTimeoutMs: 30_000,
  reconnectInitialDelayMs: 100,
  reconnectMaxDelayMs: 5_000,
  connectionName: 'idemq',
});

/** The group a subscription joins when it names none (core's default). */
export const DEFAULT_GROUP = 'default';

/** Options with every default filled in. */
export interface ResolvedOptions {
  open: () => Promise<AmqpConnection>;
  /** `host:port` of the broker, credential-free, for error messages; `undefined` for a given connection. */
  endpoint: string | undefined;
  /** The transport opened the connection and closes it; it can open another after a loss. */
  owned: boolean;
  queueType: QueueType;
  declare: boolean;
  deadLetterSuffix: string;
  queueName: (source: string, group: string) => string;
  exchangeName: (destination: string) => string;
  retryTiersMs: readonly number[];
  connectTimeoutMs: number;
  confirmTimeoutMs: number;
  rpcTimeoutMs: number;
  reconnectInitialDelayMs: number;
  reconnectMaxDelayMs: number;
  logger: Logger;
}

/** The default queue of a group: the source's own name for `'default'`. */
export function defaultQueueName(source: string, group: string): string {
  return group === DEFAULT_GROUP ? source : `${source}.${group}`;
}

/** Checks every option at once and fills in the defaults. */
export function resolveOptions(
  options: RabbitmqOptions,
  connect: (url: string | Options.Connect, socketOptions: object) => Promise<AmqpConnection>,
): ResolvedOptions {
  const check = new OptionsCheck('rabbitmq');
  if (typeof options !== 'object' || options === null) {
    check.expect(false, 'options must be an object').done();
  }
  const { url, connection } = options;
  const tiers = options.retryTiersMs;
  const badUrl = urlProblem(url);
  check
    .expect(
      (url === undefined) !== (connection === undefined),
      'give exactly one of url or connection',
    )
    .expect(
      url === undefined || typeof url === 'string' || (typeof url === 'object' && url !== null),
      'url must be an amqp:// or amqps:// URL or an amqplib connect options object',
    )
    .expect(badUrl === undefined, badUrl ?? '')
    .expect(
      connection === undefined ||
        typeof connection === 'function' ||
        (typeof connection === 'object' && typeof connection.createConfirmChannel === 'function'),
      'connection must be an amqplib connection or a function that opens one',
    )
    .oneOf('queueType', options.queueType, ['classic', 'quorum'])
    .oneOf('declare', options.declare, [true, false])
    .text('deadLetterSuffix', options.deadLetterSuffix, true)
    .fn('queueName', options.queueName, true)
    .fn('exchangeName', options.exchangeName, true)
    .integer('connectTimeoutMs', options.connectTimeoutMs, 1, 3_600_000)
    .integer('confirmTimeoutMs', options.confirmTimeoutMs, 1, 3_600_000)
    .integer('rpcTimeoutMs', options.rpcTimeoutMs, 1, 3_600_000)
    .integer('reconnect.initialDelayMs', options.reconnect?.initialDelayMs, 1, 3_600_000)
    .integer('reconnect.maxDelayMs', options.reconnect?.maxDelayMs, 1, 3_600_000)
    .text('connectionName', options.connectionName, true)
    .expect(
      tiers === undefined ||
        (Array.isArray(tiers) &&
          tiers.length > 0 &&
          tiers.every((t) => Number.isInteger(t) && t >= 1 && t <= 2 ** 31 - 1) &&
          tiers.every((t, i) => i === 0 || t > (tiers[i - 1] as number))),
      'retryTiersMs must be ascending integers from 1 to 2147483647 (RabbitMQ x-message-ttl), at least one',
    );
  const initialDelayMs =
    options.reconnect?.initialDelayMs ?? RABBITMQ_DEFAULTS.reconnectInitialDelayMs;
  const maxDelayMs = options.reconnect?.maxDelayMs ?? RABBITMQ_DEFAULTS.reconnectMaxDelayMs;
  check.expect(initialDelayMs <= maxDelayMs, 'reconnect.initialDelayMs must not exceed maxDelayMs');
  check.done();

  const connectionName = options.connectionName ?? RABBITMQ_DEFAULTS.connectionName;
  let open: () => Promise<AmqpConnection>;
  let owned = true;
  if (url !== undefined) {
    const socketOptions = {
      clientProperties: { connection_name: connectionName },
      // A connect attempt to an unanswering host gives up in time instead of holding the
      // process for the OS's TCP timeout.
      timeout: options.connectTimeoutMs ?? RABBITMQ_DEFAULTS.connectTimeoutMs,
    };
    open = () => connect(url, socketOptions);
  } else if (typeof connection === 'function') {
    open = connection;
  } else {
    const given = connection as AmqpConnection;
    open = async () => given;
    owned = false;
  }
  return {
    open,
    endpoint: url === undefined ? undefined : brokerEndpoint(url),
    owned,
    queueType: options.queueType ?? RABBITMQ_DEFAULTS.queueType,
    declare: options.declare ?? RABBITMQ_DEFAULTS.declare,
    deadLetterSuffix: options.deadLetterSuffix ?? RABBITMQ_DEFAULTS.deadLetterSuffix,
    queueName: options.queueName ?? defaultQueueName,
    exchangeName: options.exchangeName ?? ((destination: string) => destination),
    retryTiersMs: [...(tiers ?? RABBITMQ_DEFAULTS.retryTiersMs)],
    connectTimeoutMs: options.connectTimeoutMs ?? RABBITMQ_DEFAULTS.connectTimeoutMs,
    confirmTimeoutMs: options.confirmTimeoutMs ?? RABBITMQ_DEFAULTS.confirmTimeoutMs,
    rpcTimeoutMs: options.rpcTimeoutMs ?? RABBITMQ_DEFAULTS.rpcTimeoutMs,
    reconnectInitialDelayMs: initialDelayMs,
    reconnectMaxDelayMs: maxDelayMs,
    logger: options.logger ?? silentLogger,
  };
}

const AMQP_PORTS: Readonly<Record<string, number>> = { 'amqp:': 5672, 'amqps:': 5671 };

/** Why `url` cannot reach a broker, found at construction rather than after the connect timeout. */
function urlProblem(url: RabbitmqOptions['url']): string | undefined {
  if (typeof url === 'string') {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return 'url is not a URL: expected amqp://user:password@host:5672/vhost';
    }
    if (!(parsed.protocol in AMQP_PORTS)) {
      return `url must start with amqp:// or amqps://, got ${parsed.protocol}//`;
    }
    if (parsed.hostname === '') return 'url has no host';
    return undefined;
  }
  if (typeof url === 'object' && url !== null) {
    const { protocol, hostname } = url;
    if (protocol !== undefined && protocol !== 'amqp' && protocol !== 'amqps') {
      return `url.protocol must be 'amqp' or 'amqps', got ${JSON.stringify(protocol)}`;
    }
    if (hostname !== undefined && (typeof hostname !== 'string' || hostname === '')) {
      return 'url.hostname must be a non-empty string';
    }
  }
  return undefined;
}

/** `host:port` of a (checked) url, without the credentials it may hold. */
function brokerEndpoint(url: string | Options.Connect): string {
  if (typeof url === 'string') {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || AMQP_PORTS[parsed.protocol]}`;
  }
  const protocol = url.protocol === 'amqps' ? 'amqps:' : 'amqp:';
  return `${url.hostname ?? 'localhost'}:${url.port ?? AMQP_PORTS[protocol]}`;
}
