import {
  Server,
  ServerCredentials,
  type ServerInterceptor,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';

/** A grpc-js server on 127.0.0.1 (a free port) with these interceptors. */
export async function serve(
  service: ServiceDefinition,
  implementation: UntypedServiceImplementation,
  interceptors: ServerInterceptor[],
): Promise<{ address: string; close(): Promise<void> }> {
  const server = new Server({ interceptors });
  server.addService(service, implementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return {
    address: `127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        // Calls a case left hanging (a held handler) must not keep the server up.
        setTimeout(() => server.forceShutdown(), 200).unref();
      }),
  };
}
