/** `idemq.demo.Payments`, the gRPC payments API of the demo, loaded from payments.proto. */
import { fileURLToPath } from 'node:url';
import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import type { Charge } from '../payments/paymentsLedger.js';

/** The .proto beside this module (in src/ for the tests, copied into dist/ by the build). */
const PAYMENTS_PROTO = fileURLToPath(new URL('payments.proto', import.meta.url));

/** CreatePayment's request, as proto-loader gives it (field names in camelCase). */
export interface CreatePaymentRequest {
  paymentId: string;
  amountCents: number;
}

/** The Payments service and its one guarded method. */
export interface PaymentsApi {
  service: ServiceDefinition;
  createPayment: MethodDefinition<CreatePaymentRequest, Charge>;
}

let loaded: PaymentsApi | undefined;

/** Loads payments.proto once; the answer is shared by the server and the clients. */
export function paymentsApi(): PaymentsApi {
  if (loaded === undefined) {
    const service = loadSync(PAYMENTS_PROTO, { keepCase: false, defaults: true })[
      'idemq.demo.Payments'
    ] as unknown as ServiceDefinition;
    loaded = {
      service,
      createPayment: service.CreatePayment as MethodDefinition<CreatePaymentRequest, Charge>,
    };
  }
  return loaded;
}
