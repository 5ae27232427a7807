// @ts-check
// Kafka readiness: raw ApiVersions and FindCoordinator requests (no dependencies), then a
// kafkajs Metadata request (admin.describeCluster) when kafkajs is installed.
import { exchange } from './socket.mjs';

const API_VERSIONS = 18;
const FIND_COORDINATOR = 10;
const COORDINATOR_NOT_AVAILABLE = 15;

/**
 * @param {string} address host:port
 * @returns {{ host: string, port: number }}
 */
function splitAddress(address) {
  const index = address.lastIndexOf(':');
  return {
    host: address.slice(0, index).replace(/^\[|\]$/g, ''),
    port: Number(address.slice(index + 1)),
  };
}

/**
 * Sends one request (header v1) and returns the response body after the correlation id.
 * @param {string} address host:port
 * @param {number} apiKey
 * @param {number} apiVersion
 * @param {Buffer} body
 * @param {number} timeoutMs
 */
async function kafkaRequest(address, apiKey, apiVersion, body, timeoutMs) {
  const { host, port } = splitAddress(address);
  const correlationId = 0x1d3e;
  const clientId = Buffer.from('idemq-services');
  // size int32 | api_key int16 | api_version int16 | correlation_id int32 | client_id string
  const header = Buffer.alloc(14);
  header.writeInt16BE(apiKey, 4);
  header.writeInt16BE(apiVersion, 6);
  header.writeInt32BE(correlationId, 8);
  header.writeInt16BE(clientId.length, 12);
  const request = Buffer.concat([header, clientId, body]);
  request.writeInt32BE(request.length - 4, 0);
  const response = await exchange({
    host,
    port,
    payload: request,
    isComplete: (buffer) => buffer.length >= 4 && buffer.length >= 4 + buffer.readInt32BE(0),
    timeoutMs,
  });
  if (response.length < 10 || response.readInt32BE(4) !== correlationId) {
    throw new Error(`${address} did not answer like a Kafka broker`);
  }
  return response.subarray(8);
}

/**
 * ApiVersions v0: every broker since 0.10 answers it, before any other handshake.
 * @param {string} address host:port
 * @param {number} [timeoutMs]
 * @returns {Promise<number>} how many APIs the broker lists
 */
export async function probeKafkaApiVersions(address, timeoutMs = 3000) {
  const body = await kafkaRequest(address, API_VERSIONS, 0, Buffer.alloc(0), timeoutMs);
  const errorCode = body.readInt16BE(0);
  if (errorCode !== 0) throw new Error(`ApiVersions answered error code ${errorCode}`);
  return body.readInt32BE(2);
}

/**
 * FindCoordinator v0 for a group: the first one makes the broker create __consumer_offsets,
 * and it answers COORDINATOR_NOT_AVAILABLE until that topic has a leader. Asking here means
 * the first consumer group in a test joins at once.
 * @param {string} address host:port
 * @param {number} [timeoutMs]
 */
export async function probeKafkaGroupCoordinator(address, timeoutMs = 3000) {
  const group = Buffer.from('idemq-services-readiness');
  const request = Buffer.alloc(2);
  request.writeInt16BE(group.length, 0);
  const body = await kafkaRequest(
    address,
    FIND_COORDINATOR,
    0,
    Buffer.concat([request, group]),
    timeoutMs,
  );
  const errorCode = body.readInt16BE(0);
  if (errorCode === COORDINATOR_NOT_AVAILABLE)
    throw new Error('group coordinator not available yet');
  if (errorCode !== 0) throw new Error(`FindCoordinator answered error code ${errorCode}`);
}

/**
 * kafkajs, if this package's node_modules has it.
 * @returns {Promise<typeof import('kafkajs') | null>}
 */
async function loadKafkajs() {
  try {
    return await import('kafkajs');
  } catch {
    return null;
  }
}

/**
 * @param {readonly string[]} brokers host:port list
 * @param {{ timeoutMs?: number, groupCoordinator?: boolean }} [options]
 * @returns {Promise<'metadata' | 'api-versions'>} how far the probe went
 */
export async function probeKafka(brokers, options = {}) {
  const timeoutMs = options.timeoutMs ?? 5000;
  const first = brokers[0];
  if (!first) throw new Error('no Kafka broker address given');
  await probeKafkaApiVersions(first, timeoutMs);
  if (options.groupCoordinator) await probeKafkaGroupCoordinator(first, timeoutMs);
  const kafkajs = await loadKafkajs();
  if (!kafkajs) return 'api-versions';
  const admin = new kafkajs.Kafka({
    clientId: 'idemq-services-probe',
    brokers: [...brokers],
    connectionTimeout: timeoutMs,
    requestTimeout: timeoutMs,
    retry: { retries: 0 },
    logLevel: kafkajs.logLevel.NOTHING,
  }).admin();
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    if (cluster.brokers.length === 0) throw new Error('Metadata lists no registered broker yet');
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
  return 'metadata';
}
