import { fileURLToPath } from 'node:url';
import type { ServiceDefinition } from '@grpc/grpc-js';
import { loadSync, type MethodDefinition } from '@grpc/proto-loader';

/** The .proto of the suite's service, shipped beside this module. */
export const PAYMENTS_PROTO = fileURLToPath(new URL('payments.proto', import.meta.url));

/** Charge's request and reply as the suite writes and reads them (proto field names kept). */
export interface ChargeRequest {
  request_id?: string;
  account: string;
  amount: number;
  note?: Uint8Array;
}

export interface ChargeReply {
  charge_id: string;
  amount: number;
  receipt: Uint8Array;
}

let loaded: ServiceDefinition | undefined;

/** `idemq.conformance.Payments`, loaded once with proto-loader (field names kept, longs as numbers). */
export function paymentsService(): ServiceDefinition {
  loaded ??= loadSync(PAYMENTS_PROTO, {
    keepCase: true,
    longs: Number,
    defaults: true,
  })['idemq.conformance.Payments'] as unknown as ServiceDefinition;
  return loaded;
}

/** Charge's definition, whose serializers the suite encodes requests and decodes replies with. */
export function chargeMethod(): MethodDefinition<ChargeRequest, ChargeReply> {
  return paymentsService().Charge as unknown as MethodDefinition<ChargeRequest, ChargeReply>;
}
