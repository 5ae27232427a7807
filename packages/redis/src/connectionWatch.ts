import { StoreUnavailableError } from '@idemq/core';
import { redact } from './errorClassifier.js';
import type { RedisClient } from './scriptRunner.js';

/** The reconnection timer ioredis keeps on the client (not in its types). */
interface Reconnecting {
  reconnectTimeout?: { unref?: () => void } | null;
}

/**
 * Watches the connection of the store's client, so that a store error while Redis is out of
 * reach says where Redis was looked for and why it could not be reached, rather than the
 * client's own wording (ioredis's "max retries per request", an option the user never set).
 *
 * For a client the store opened, it also lets the wait before each reconnection attempt not
 * hold the process open: a script that caught the store's error and forgot `close()` exits,
 * while a process that lives on (a consumer, a server) still reconnects after an outage.
 */
export class ConnectionWatch {
  private lastError: Error | undefined;

  constructor(
    private readonly client: RedisClient,
    owned: boolean,
  ) {
    if (!owned) return; // a client the user gave keeps the listeners and timers they chose
    client.on('error', (error: Error) => {
      this.lastError = error;
    });
    client.on('ready', () => {
      this.lastError = undefined;
    });
    // Emitted on the tick after ioredis armed the reconnection timer.
    client.on('reconnecting', () => {
      (client as unknown as Reconnecting).reconnectTimeout?.unref?.();
    });
  }

  /** Where the client looks for Redis, without credentials. */
  get endpoint(): string {
    if ('nodes' in this.client) return 'Redis Cluster';
    const { host, port, sentinels, name } = this.client.options;
    if (sentinels && sentinels.length > 0) return `Redis (Sentinel master "${name}")`;
    return `Redis at ${host}:${port}`;
  }

  /**
   * `error` as the caller should see it: a store error raised while the client is not
   * connected becomes "unreachable", naming the endpoint, the store's own timeout if that was
   * it, and the last connection error, and keeping the original as `cause`. Anything else is
   * returned as it is.
   */
  explain(operation: string, error: unknown): unknown {
    if (!(error instanceof StoreUnavailableError) || this.client.status === 'ready') return error;
    // Without a cause the error is the store's own (a timeout): its words say how long it waited.
    const reasons = error.cause === undefined ? [error.message] : [];
    if (this.lastError !== undefined) {
      reasons.push(`last connection error: ${describeConnectionError(this.lastError)}`);
    }
    if (reasons.length === 0) reasons.push(`not connected (${this.client.status})`);
    return new StoreUnavailableError(
      `${this.endpoint} is unreachable: ${operation} failed: ${reasons.join('; ')}`,
      { cause: error.cause ?? this.lastError ?? error, reason: 'unreachable' },
    );
  }
}

/** A socket error in a few words; Node reports a refused dual-stack connect as an AggregateError. */
function describeConnectionError(error: Error): string {
  const first = error instanceof AggregateError ? (error.errors[0] as unknown) : undefined;
  const detail = error.message || (first instanceof Error ? first.message : '');
  const { code } = error as Error & { code?: unknown };
  return redact(detail || (typeof code === 'string' ? code : error.name));
}
