// A server process for the gRPC conformance suite's crash case (G12), forked by
// conformanceHarnesses.ts: the built package (dist) in front of the suite's process
// implementation, on a Redis store that outlives the process. It sends its address once bound.
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { paymentsService, processImplementation } from '@idemq/conformance/grpc-process';
import { idempotencyInterceptor } from '@idemq/grpc';
import { redisStore } from '@idemq/redis';

const { redisUrl, prefix, options, implementation } = JSON.parse(process.argv[2]);
const store = redisStore({ url: redisUrl, prefix });
const service = paymentsService();
const server = new Server({
  interceptors: [idempotencyInterceptor({ ...options, store, methods: [service] })],
});
server.addService(service, processImplementation(implementation));
const port = await new Promise((resolve, reject) =>
  server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) =>
    error ? reject(error) : resolve(bound),
  ),
);
process.send?.({ address: `127.0.0.1:${port}` });
process.on('SIGTERM', () => {
  server.tryShutdown(() => store.close().finally(() => process.exit(0)));
});
