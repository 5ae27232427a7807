import {
  type CallOptions,
  Client,
  type ClientOptions,
  type ClientReadableStream,
  type ClientUnaryCall,
  credentials,
  Metadata,
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceDefinition,
  type ServiceError,
  type sendUnaryData,
  type status,
} from '@grpc/grpc-js';

/** The request of the test service: an order number the tests follow across attempts. */
export interface Order {
  order: number;
}

/** The reply: which order, under which key, on which attempt the server saw it. */
export interface Receipt {
  order: number;
  key: string | undefined;
  attempt: number;
}

/** One call as the server saw it. */
export interface Arrival {
  order: number;
  /** The first `idempotency-key` value, if any. */
  key: string | undefined;
  metadata: Metadata;
  /** 1 for the first arrival of this order, +1 for each next one. */
  attempt: number;
  atMs: number;
}

/** How the server answers an arrival. */
export type Answer =
  | { ok: true }
  | { code: status; details?: string; trailers?: Metadata; headers?: Metadata }
  | { hang: true };

export type Script = (arrival: Arrival) => Answer;

const serialize = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));
const deserialize = (bytes: Buffer): never => JSON.parse(bytes.toString('utf8')) as never;

const PLACE = '/idemq.test.Ledger/Place';
const WATCH = '/idemq.test.Ledger/Watch';

/** A unary and a server-streaming method with JSON messages (no protobuf needed). */
const ledgerService = {
  place: {
    path: PLACE,
    requestStream: false,
    responseStream: false,
    requestSerialize: serialize,
    requestDeserialize: deserialize,
    responseSerialize: serialize,
    responseDeserialize: deserialize,
  },
  watch: {
    path: WATCH,
    requestStream: false,
    responseStream: true,
    requestSerialize: serialize,
    requestDeserialize: deserialize,
    responseSerialize: serialize,
    responseDeserialize: deserialize,
  },
} satisfies ServiceDefinition;

export interface TestServer {
  address: string;
  arrivals: Arrival[];
  /** Arrivals whose call the client cancelled while the server held it. */
  cancelled: Arrival[];
  arrivalsOf(order: number): Arrival[];
  /** Resolves once `count` calls have arrived. */
  waitForArrivals(count: number): Promise<void>;
  close(): void;
}

/** A grpc-js server on 127.0.0.1 whose every answer `script` decides. */
export async function startTestServer(script: Script): Promise<TestServer> {
  const arrivals: Arrival[] = [];
  const cancelled: Arrival[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const arrive = (order: number, metadata: Metadata): Arrival => {
    const [key] = metadata.get('idempotency-key');
    const attempt = arrivals.filter((a) => a.order === order).length + 1;
    const arrival: Arrival = {
      order,
      key: typeof key === 'string' ? key : undefined,
      metadata: metadata.clone(),
      attempt,
      atMs: performance.now(),
    };
    arrivals.push(arrival);
    for (const waiter of waiters.filter((w) => arrivals.length >= w.count)) waiter.resolve();
    return arrival;
  };

  const server = new Server();
  server.addService(ledgerService, {
    place: (call: ServerUnaryCall<Order, Receipt>, callback: sendUnaryData<Receipt>) => {
      const arrival = arrive(call.request.order, call.metadata);
      const answer = script(arrival);
      if ('ok' in answer) {
        callback(null, { order: arrival.order, key: arrival.key, attempt: arrival.attempt });
      } else if ('hang' in answer) {
        call.on('cancelled', () => cancelled.push(arrival));
      } else {
        if (answer.headers) call.sendMetadata(answer.headers);
        callback({
          code: answer.code,
          details: answer.details ?? `no (attempt ${arrival.attempt})`,
          metadata: answer.trailers ?? new Metadata(),
        });
      }
    },
    watch: (call: ServerWritableStream<Order, Receipt>) => {
      const order = call.request.order;
      const arrival = arrive(order, call.metadata);
      call.write({ order, key: arrival.key, attempt: arrival.attempt });
      const answer = script(arrival);
      if ('code' in answer) call.emit('error', { code: answer.code, details: 'stream failed' });
      else call.end();
    },
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    );
  });
  return {
    address: `127.0.0.1:${port}`,
    arrivals,
    cancelled,
    arrivalsOf: (order) => arrivals.filter((a) => a.order === order),
    waitForArrivals: (count) =>
      arrivals.length >= count
        ? Promise.resolve()
        : new Promise((resolve) => waiters.push({ count, resolve })),
    close: () => server.forceShutdown(),
  };
}

export function testClient(address: string, options?: ClientOptions): Client {
  return new Client(address, credentials.createInsecure(), options);
}

/** How a unary call ended, with the response headers the caller was given. */
export interface Outcome {
  error: ServiceError | undefined;
  receipt: Receipt | undefined;
  headers: Metadata[];
  elapsedMs: number;
}

export interface PlaceOptions extends CallOptions {
  metadata?: Metadata;
}

/** Calls the unary method; `call` to cancel it, `outcome` to await it. */
export function place(
  client: Client,
  order: number,
  { metadata = new Metadata(), ...options }: PlaceOptions = {},
): { call: ClientUnaryCall; outcome: Promise<Outcome> } {
  const startedAt = performance.now();
  const headers: Metadata[] = [];
  let call: ClientUnaryCall | undefined;
  const outcome = new Promise<Outcome>((resolve) => {
    call = client.makeUnaryRequest<Order, Receipt>(
      PLACE,
      serialize,
      deserialize,
      { order },
      metadata,
      options,
      (error, receipt) =>
        resolve({
          error: error ?? undefined,
          receipt,
          headers,
          elapsedMs: performance.now() - startedAt,
        }),
    );
    call.on('metadata', (received: Metadata) => headers.push(received));
  });
  return { call: call!, outcome };
}

/** Calls the server-streaming method. */
export function watch(client: Client, order: number): ClientReadableStream<Receipt> {
  return client.makeServerStreamRequest<Order, Receipt>(
    WATCH,
    serialize,
    deserialize,
    { order },
    new Metadata(),
  );
}
