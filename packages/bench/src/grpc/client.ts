/**
 * The load client, in a child process of its own so that the parent stays idle: grpc-js clients
 * (one channel per server port, kept across rounds) keeping N unary calls in flight.
 */
import { performance } from 'node:perf_hooks';
import { type Client, credentials, Metadata, type ServiceError, status } from '@grpc/grpc-js';
import type { SessionHandle } from '../childSession.js';
import { quantile } from '../stats.js';
import { type ChargeReply, type ChargeRequest, loadPayments } from './proto.js';
import {
  type ClientCalls,
  type ClientLoad,
  type ClientRequest,
  type ClientResult,
  replayedKey,
} from './types.js';

/** A call that takes longer has hung: it fails instead of stalling the bench. */
const DEADLINE_MS = 10_000;

const REQUEST: ChargeRequest = { account: 'acct-1', amount: 1 };

interface PaymentsClient extends Client {
  Charge(
    request: ChargeRequest,
    metadata: Metadata,
    options: { deadline: number },
    done: (error: ServiceError | null, reply?: ChargeReply) => void,
  ): { on(event: 'metadata', listener: (metadata: Metadata) => void): unknown };
}

/** Opens the load client; each round is one load or one list of calls. */
export async function openGrpcClient(
  _init: Record<string, never>,
): Promise<SessionHandle<ClientRequest, ClientResult, { maxRssBytes: number }>> {
  const Payments = loadPayments();
  const clients = new Map<number, PaymentsClient>();
  const clientFor = (port: number) => {
    let client = clients.get(port);
    if (!client) {
      client = new Payments(
        `127.0.0.1:${port}`,
        credentials.createInsecure(),
      ) as unknown as PaymentsClient;
      clients.set(port, client);
    }
    return client;
  };
  return {
    async round(request) {
      const client = clientFor(request.port);
      return request.kind === 'load'
        ? load(client, request)
        : calls(client, request.keys, request.atOnce);
    },
    async close() {
      for (const client of clients.values()) client.close();
      return { maxRssBytes: process.resourceUsage().maxRSS * 1024 };
    },
  };
}

/** One call with `key`: its status code, and whether it came back marked replayed. */
function charge(client: PaymentsClient, key: string): Promise<{ code: number; replayed: boolean }> {
  return new Promise((resolve) => {
    const metadata = new Metadata();
    metadata.set('idempotency-key', key);
    let replayed = false;
    const call = client.Charge(REQUEST, metadata, { deadline: Date.now() + DEADLINE_MS }, (error) =>
      resolve({ code: error ? error.code : status.OK, replayed }),
    );
    call.on('metadata', (received) => {
      replayed = received.get('idempotent-replayed')[0] === 'true';
    });
  });
}

/** `concurrency` loops, each starting its next call when the last one ends, for `seconds`. */
async function load(
  client: PaymentsClient,
  request: Extract<ClientRequest, { kind: 'load' }>,
): Promise<ClientLoad> {
  const latencies: number[] = [];
  let nonOk = 0;
  let sequence = 0;
  const fixedKey = replayedKey(request.tag);
  const started = performance.now();
  const end = started + request.seconds * 1000;
  const loop = async () => {
    while (performance.now() < end) {
      const key = request.mode === 'replay' ? fixedKey : `${request.tag}-${sequence++}`;
      const callStarted = performance.now();
      const { code } = await charge(client, key);
      latencies.push(performance.now() - callStarted);
      if (code !== status.OK) nonOk++;
    }
  };
  await Promise.all(Array.from({ length: request.concurrency }, loop));
  return {
    calls: latencies.length,
    durationMs: performance.now() - started,
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    nonOk,
  };
}

async function calls(
  client: PaymentsClient,
  keys: string[],
  atOnce: boolean,
): Promise<ClientCalls> {
  const answers = [];
  if (atOnce) answers.push(...(await Promise.all(keys.map((key) => charge(client, key)))));
  else for (const key of keys) answers.push(await charge(client, key));
  return {
    codes: answers.map((a) => a.code),
    replayed: answers.filter((a) => a.replayed).length,
  };
}
