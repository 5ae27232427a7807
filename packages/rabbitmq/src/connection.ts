import { backoffDelayMs, TransportClosedError } from '@idemq/core';
import { describeAmqpError, TransportUnavailableError } from './errors.js';
import type { AmqpConnection, ResolvedOptions } from './options.js';
import { closedWithin } from './rpcDeadline.js';

/** A live connection and its generation (one per successful connect). */
export interface LiveConnection {
  model: AmqpConnection;
  generation: number;
}

type ConnectorSettings = Pick<
  ResolvedOptions,
  | 'open'
  | 'endpoint'
  | 'owned'
  | 'connectTimeoutMs'
  | 'rpcTimeoutMs'
  | 'reconnectInitialDelayMs'
  | 'reconnectMaxDelayMs'
  | 'logger'
>;

interface Waiter {
  resolve: (live: LiveConnection) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/** Backoff delay before reconnection attempt `attempt` (1-based), full jitter. */
export function reconnectDelayMs(
  attempt: number,
  settings: Pick<ResolvedOptions, 'reconnectInitialDelayMs' | 'reconnectMaxDelayMs'>,
): number {
  return backoffDelayMs(attempt, {
    maxAttempts: 1,
    baseDelayMs: settings.reconnectInitialDelayMs,
    maxDelayMs: settings.reconnectMaxDelayMs,
    jitter: 'full',
  });
}

/**
 * Owns the one AMQP connection of a transport: opens it on first use, and after a loss opens a
 * new one with backoff until `close()`. Channels are the users' business: they learn about a
 * loss through their channels' `close` events and ask `get()` for the next connection.
 */
export class Connector {
  private live: LiveConnection | undefined;
  private generation = 0;
  private looping = false;
  private closed = false;
  private closing: Promise<void> | undefined;
  /** Set when the connection cannot come back (a connection the user owns died). */
  private permanentFailure: Error | undefined;
  private lastError: unknown;
  private sleepTimer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;
  private keepAlive = 0;
  private readonly waiters = new Set<Waiter>();

  constructor(private readonly settings: ConnectorSettings) {}

  /** Why the connection can never come back (a connection the user owns died), if so. */
  get failure(): Error | undefined {
    return this.permanentFailure;
  }

  /** The connection right now, if there is one. */
  get current(): LiveConnection | undefined {
    return this.live;
  }

  /**
   * A live connection: the current one, or the next one, connecting when needed. Rejects after
   * `timeoutMs` with a retriable `TransportUnavailableError`, at once with a non-retriable one
   * when the broker refuses the login, or at once when closed.
   */
  get(timeoutMs = this.settings.connectTimeoutMs): Promise<LiveConnection> {
    if (this.closed) return Promise.reject(new TransportClosedError('rabbitmq'));
    if (this.permanentFailure) return Promise.reject(this.permanentFailure);
    if (this.live) return Promise.resolve(this.live);
    this.startLoop();
    return new Promise<LiveConnection>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          reject(
            new TransportUnavailableError(
              `No connection to RabbitMQ${this.at()} within ${timeoutMs} ms` +
                (this.lastError === undefined ? '' : `: ${describeAmqpError(this.lastError)}`),
              { cause: this.lastError },
            ),
          );
        }, timeoutMs),
      };
      // Not unref'd: someone awaits this connection, so the process must live to settle it.
      this.waiters.add(waiter);
    });
  }

  /**
   * While held, a reconnection wait keeps the process alive (as the socket it replaces did):
   * a running consumer must not exit during a broker outage. Returns the release function.
   */
  hold(): () => void {
    this.keepAlive += 1;
    this.sleepTimer?.ref();
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.keepAlive -= 1;
      if (this.keepAlive === 0) this.sleepTimer?.unref();
    };
  }

  /** Closes the connection (when the transport opened it) and stops reconnecting. Idempotent. */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.closed = true;
    clearTimeout(this.sleepTimer);
    this.wake?.();
    this.rejectWaiters(new TransportClosedError('rabbitmq'));
    const live = this.live;
    this.live = undefined;
    this.closing = live && this.settings.owned ? this.closeOwned(live.model) : Promise.resolve();
    return this.closing;
  }

  /**
   * Closes a connection the transport opened (one already closed by the broker: nothing to do).
   * RabbitMQ confirms a connection's close only once all its channels closed, which a channel
   * waiting on a stuck queue never does: after rpcTimeoutMs the socket is destroyed instead, as
   * a crash would, so that close() returns and the process can exit.
   */
  private async closeOwned(model: AmqpConnection): Promise<void> {
    if (await closedWithin(() => model.close(), this.settings.rpcTimeoutMs)) return;
    const { stream } = model.connection as { stream?: { destroy?: () => void } };
    stream?.destroy?.();
  }

  private startLoop(): void {
    if (this.looping || this.closed || this.permanentFailure || this.live) return;
    this.looping = true;
    void this.loop().finally(() => {
      this.looping = false;
    });
  }

  /** Connects, with backoff between failed attempts, until connected or closed. */
  private async loop(): Promise<void> {
    let attempt = 0;
    for (;;) {
      if (this.closed) return;
      try {
        const model = await this.settings.open();
        if (this.closed) {
          if (this.settings.owned) await model.close().catch(() => undefined);
          return;
        }
        this.adopt(model);
        return;
      } catch (error) {
        this.lastError = error;
        if (isLoginRefused(error)) {
          // Waiting cannot fix a wrong user or password: tell the waiters now.
          this.rejectWaiters(
            new TransportUnavailableError(
              `RabbitMQ${this.at()} refused the login (403 ACCESS_REFUSED): check the user and ` +
                'password in the url',
              { cause: error, retriable: false },
            ),
          );
        }
        // Nobody waits and no subscription runs: the next get() starts over.
        if (this.waiters.size === 0 && this.keepAlive === 0) return;
        attempt += 1;
        const delayMs = reconnectDelayMs(attempt, this.settings);
        this.settings.logger.warn(
          { attempt, delayMs, error: describeAmqpError(error) },
          'idemq rabbitmq: connecting failed, trying again',
        );
        await this.sleep(delayMs);
      }
    }
  }

  private adopt(model: AmqpConnection): void {
    this.generation += 1;
    const live: LiveConnection = { model, generation: this.generation };
    this.live = live;
    this.lastError = undefined;
    // Without an 'error' listener an EventEmitter throws: a dropped socket would crash the process.
    model.on('error', (error: Error) => {
      this.settings.logger.warn(
        { error: describeAmqpError(error) },
        'idemq rabbitmq: connection error',
      );
    });
    model.on('blocked', (reason: string) => {
      this.settings.logger.warn({ reason }, 'idemq rabbitmq: the broker blocks publishing');
    });
    model.once('close', (error?: Error) => this.lost(live, error));
    for (const waiter of [...this.waiters]) {
      clearTimeout(waiter.timer);
      waiter.resolve(live);
    }
    this.waiters.clear();
    if (live.generation > 1) {
      this.settings.logger.info({ generation: live.generation }, 'idemq rabbitmq: reconnected');
    }
  }

  private lost(live: LiveConnection, error: Error | undefined): void {
    if (this.live !== live) return;
    this.live = undefined;
    this.lastError = error;
    if (this.closed) return;
    this.settings.logger.warn(
      { error: error === undefined ? 'closed' : describeAmqpError(error) },
      'idemq rabbitmq: connection lost',
    );
    if (!this.settings.owned) {
      // Not ours to reopen: the same object would come back dead.
      this.permanentFailure = new TransportUnavailableError(
        'The connection given to rabbitmq() closed; pass a function as `connection` to reconnect',
        { cause: error, retriable: false },
      );
      this.rejectWaiters(this.permanentFailure);
      return;
    }
    this.startLoop();
  }

  /** ` at host:port`, or nothing for a connection the user gave. */
  private at(): string {
    return this.settings.endpoint === undefined ? '' : ` at ${this.settings.endpoint}`;
  }

  private rejectWaiters(error: Error): void {
    for (const waiter of [...this.waiters]) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
    }
    this.waiters.clear();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      this.wake = resolve;
      this.sleepTimer = setTimeout(resolve, ms);
      if (this.keepAlive === 0) this.sleepTimer.unref();
    }).finally(() => {
      this.wake = undefined;
      this.sleepTimer = undefined;
    });
  }
}

/** True when the broker refused the credentials (amqplib reports it in the message only). */
export function isLoginRefused(error: unknown): boolean {
  return error instanceof Error && /\b403\b.*ACCESS[-_]REFUSED/.test(error.message);
}

/** True for errors that mean "the connection or channel went away", which reconnection fixes. */
export function isConnectionLoss(error: unknown): boolean {
  if (error instanceof TransportUnavailableError) return error.retriable;
  if (!(error instanceof Error)) return false;
  if (error.name === 'IllegalOperationError') return true;
  const { code } = error as Error & { code?: unknown };
  // 320 CONNECTION_FORCED, 541 INTERNAL_ERROR, socket errors.
  return (
    code === 320 ||
    code === 541 ||
    code === 'ECONNRESET' ||
    code === 'ECONNREFUSED' ||
    code === 'EPIPE' ||
    /Channel ended|Channel closed|Connection closed|Socket closed/i.test(error.message)
  );
}
