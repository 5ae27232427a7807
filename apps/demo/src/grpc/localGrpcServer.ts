/** grpc-js on 127.0.0.1: the server the demo's gRPC payments API runs on. */
import {
  Server,
  ServerCredentials,
  type ServerInterceptor,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';

export interface LocalGrpcServer {
  /** `127.0.0.1:<port>`, the port chosen by the OS. */
  readonly address: string;
  close(): Promise<void>;
}

/**
 * Serves `implementation` of `service` on 127.0.0.1 (a port the OS picks), behind
 * `interceptors`. A client whose deadline expired does not stop a handler: it still finishes.
 */
export async function serveLocally(
  service: ServiceDefinition,
  implementation: UntypedServiceImplementation,
  interceptors: ServerInterceptor[],
): Promise<LocalGrpcServer> {
  const server = new Server({ interceptors });
  server.addService(service, implementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return {
    address: `127.0.0.1:${port}`,
    // The run waited for its handlers: nothing is left to drain.
    close: async () => server.forceShutdown(),
  };
}
