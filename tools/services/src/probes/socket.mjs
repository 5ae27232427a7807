// @ts-check
// A single request/response over TCP (or TLS), for the dependency-free protocol probes.
import net from 'node:net';
import tls from 'node:tls';

/**
 * @typedef {object} ExchangeOptions
 * @property {string} host
 * @property {number} port
 * @property {Buffer} payload                       sent once connected
 * @property {(received: Buffer) => boolean} isComplete  true when enough has arrived
 * @property {number} [timeoutMs]
 * @property {boolean} [tls]
 */

/**
 * Connects, sends the payload and resolves with what came back once isComplete says so.
 * @param {ExchangeOptions} options
 * @returns {Promise<Buffer>}
 */
export function exchange(options) {
  const timeoutMs = options.timeoutMs ?? 3000;
  return new Promise((resolve, reject) => {
    /** @type {Buffer[]} */
    const chunks = [];
    let settled = false;
    const socket = options.tls
      ? tls.connect({ host: options.host, port: options.port, servername: options.host })
      : net.connect({ host: options.host, port: options.port });
    /** @param {Error | null} error @param {Buffer} [value] */
    const finish = (error, value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve(value ?? Buffer.alloc(0));
    };
    const timer = setTimeout(
      () => finish(new Error(`no answer from ${options.host}:${options.port} in ${timeoutMs} ms`)),
      timeoutMs,
    );
    socket.once(options.tls ? 'secureConnect' : 'connect', () => socket.write(options.payload));
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      const received = Buffer.concat(chunks);
      if (options.isComplete(received)) finish(null, received);
    });
    socket.on('error', (error) => finish(error));
    socket.on('close', () =>
      finish(new Error(`${options.host}:${options.port} closed the connection before answering`)),
    );
  });
}

/**
 * True when something accepts TCP connections on host:port.
 * @param {string} host
 * @param {number} port
 * @param {number} [timeoutMs]
 */
export function isPortOpen(host, port, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (/** @type {boolean} */ open) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(open);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
