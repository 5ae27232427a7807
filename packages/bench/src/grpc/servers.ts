/**
 * The servers the gRPC benchmark loads, one per child process: the same trivial unary `Charge`
 * on grpc-js, bare or behind an idempotency interceptor, every interceptor on the same Redis.
 */
import {
  type MethodDefinition,
  Server,
  ServerCredentials,
  type ServerInterceptor,
  type ServerUnaryCall,
  type sendUnaryData,
} from '@grpc/grpc-js';
import { idempotencyInterceptor } from '@idemq/grpc';
import { redisStore } from '@idemq/redis';
import { Redis } from 'ioredis';
import type { SessionHandle } from '../childSession.js';
import { CommandCounter, countIoredis } from '../commandCounter.js';
import type { CountersRequest } from '../serverBench.js';
import { handInterceptor } from './handInterceptor.js';
import { type ChargeReply, type ChargeRequest, loadPayments } from './proto.js';
import type { GrpcServerInit, ServerCounters } from './types.js';

/** Opens the server `init` names on 127.0.0.1 (a port the OS picks). */
export async function openGrpcServer(
  init: GrpcServerInit,
): Promise<SessionHandle<CountersRequest, ServerCounters, { maxRssBytes: number }>> {
  const { service } = loadPayments();
  const counts = { handlerRuns: 0 };
  const sent = new CommandCounter();
  let baseline = 0;
  let cpuBaseline = process.cpuUsage();
  const closers: (() => Promise<unknown>)[] = [];
  const interceptors: ServerInterceptor[] = [];

  const client = async () => {
    const redis = countIoredis(new Redis(init.redisUrl, { maxRetriesPerRequest: 1 }), sent);
    await redis.ping();
    closers.push(() => redis.quit());
    return redis;
  };
  switch (init.server) {
    case 'bare':
      break;
    case 'idemq': {
      const store = redisStore({ client: await client(), prefix: `${init.namespace}:idemq` });
      await store.ready();
      interceptors.push(idempotencyInterceptor({ store, methods: [service] }));
      break;
    }
    case 'hand': {
      const charge = service.Charge as MethodDefinition<unknown, unknown>;
      interceptors.push(handInterceptor(await client(), `${init.namespace}:hand:`, charge));
      break;
    }
  }

  const server = new Server({ interceptors });
  server.addService(service, {
    Charge(call: ServerUnaryCall<ChargeRequest, ChargeReply>, done: sendUnaryData<ChargeReply>) {
      counts.handlerRuns++;
      done(null, { chargeId: `ch-${counts.handlerRuns}`, amount: call.request.amount });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return {
    async round({ reset }) {
      const cpu = process.cpuUsage(cpuBaseline);
      const result = {
        handlerRuns: counts.handlerRuns,
        redisRoundTrips: sent.snapshot().total - baseline,
        cpuMicros: cpu.user + cpu.system,
        port,
      };
      if (reset) {
        counts.handlerRuns = 0;
        baseline = sent.snapshot().total;
        cpuBaseline = process.cpuUsage();
      }
      return result;
    },
    async close() {
      server.forceShutdown();
      for (const close of closers) await close().catch(() => undefined);
      return { maxRssBytes: process.resourceUsage().maxRSS * 1024 };
    },
  };
}
