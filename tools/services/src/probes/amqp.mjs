// @ts-check
// RabbitMQ readiness: a full AMQP connection (login, vhost open) through amqplib when it is
// installed; otherwise the protocol header, which the broker must answer with Connection.Start.
import { exchange } from './socket.mjs';

/** "AMQP" 0 0 9 1: the AMQP 0-9-1 protocol header. */
const PROTOCOL_HEADER = Buffer.from([0x41, 0x4d, 0x51, 0x50, 0, 0, 9, 1]);
const FRAME_METHOD = 1;
const CLASS_CONNECTION = 10;
const METHOD_START = 10;

/**
 * Throws unless the broker answers the AMQP 0-9-1 header with a Connection.Start frame.
 * @param {string} url
 * @param {number} [timeoutMs]
 */
export async function probeAmqpHeader(url, timeoutMs = 3000) {
  const parsed = new URL(url);
  const secure = parsed.protocol === 'amqps:';
  const frame = await exchange({
    host: parsed.hostname.replace(/^\[|\]$/g, ''),
    port: Number(parsed.port || (secure ? 5671 : 5672)),
    tls: secure,
    payload: PROTOCOL_HEADER,
    // frame = type(1) channel(2) size(4) payload(size) end(1)
    isComplete: (buffer) => buffer.length >= 7 && buffer.length >= 8 + buffer.readUInt32BE(3),
    timeoutMs,
  });
  if (frame.subarray(0, 4).toString('latin1') === 'AMQP') {
    throw new Error('the broker does not speak AMQP 0-9-1 (it sent back its protocol header)');
  }
  const isStart =
    frame[0] === FRAME_METHOD &&
    frame.readUInt16BE(7) === CLASS_CONNECTION &&
    frame.readUInt16BE(9) === METHOD_START;
  if (!isStart) throw new Error('no Connection.Start frame in the answer to the AMQP header');
}

/**
 * amqplib, if this package's node_modules has it.
 * @returns {Promise<typeof import('amqplib') | null>}
 */
async function loadAmqplib() {
  try {
    return await import('amqplib');
  } catch {
    return null;
  }
}

/**
 * Opens and closes a real AMQP connection (credentials and vhost from the URL).
 * @param {string} url
 * @param {number} [timeoutMs]
 * @returns {Promise<'connection' | 'header'>} how far the probe went
 */
export async function probeAmqp(url, timeoutMs = 5000) {
  const amqplib = await loadAmqplib();
  if (!amqplib) {
    await probeAmqpHeader(url, timeoutMs);
    return 'header';
  }
  const connection = await amqplib.connect(url, { timeout: timeoutMs });
  // A failing close must not turn a successful probe into a failure.
  connection.on('error', () => {});
  await connection.close().catch(() => undefined);
  return 'connection';
}
