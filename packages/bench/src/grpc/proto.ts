import { fileURLToPath } from 'node:url';
import { loadPackageDefinition, type ServiceClientConstructor } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

// tsc copies no .proto file: from dist/grpc/ and src/grpc/ alike this is the one in src/grpc/.
const PROTO_FILE = fileURLToPath(new URL('../../src/grpc/payments.proto', import.meta.url));

/** The method every server guards, by its path. */
export const CHARGE_PATH = '/idemq.bench.Payments/Charge';

export interface ChargeRequest {
  account: string;
  amount: number;
}

export interface ChargeReply {
  chargeId: string;
  amount: number;
}

/**
 * The bench's `Payments` service as proto-loader gives it: the client constructor, whose
 * `service` is the definition `addService` and `idempotencyInterceptor` take.
 */
export function loadPayments(): ServiceClientConstructor {
  const definition = loadSync(PROTO_FILE, { longs: Number, defaults: true });
  const root = loadPackageDefinition(definition) as unknown as {
    idemq: { bench: { Payments: ServiceClientConstructor } };
  };
  return root.idemq.bench.Payments;
}
