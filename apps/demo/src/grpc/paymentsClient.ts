/**
 * One demo client of the gRPC payments API: how a logical CreatePayment is made. The demo keys
 * and retries each payment itself so that it can count every attempt; an application would pass
 * `idempotencyClientInterceptor()` from `@idemq/grpc` in the client's options instead.
 */
import { Client, credentials } from '@grpc/grpc-js';
import { uuidv7 } from '@idemq/core';
import type { PaymentOrder } from '../payments/paymentClients.js';
import type { Charge } from '../payments/paymentsLedger.js';
import { paymentsApi } from './paymentsService.js';
import {
  callWithRetries,
  type GrpcCallResult,
  type GrpcRetryOptions,
} from './retryingGrpcClient.js';

export interface PaymentsClient {
  /** One logical payment: one idempotency key, however many attempts. */
  createPayment(order: PaymentOrder): Promise<GrpcCallResult<Charge>>;
  close(): void;
}

/** A client with its own channel to `address`, as a separate process would have. */
export function connectPaymentsClient(address: string, options: GrpcRetryOptions): PaymentsClient {
  const { createPayment } = paymentsApi();
  const client = new Client(address, credentials.createInsecure());
  return {
    createPayment({ paymentId, amountCents }) {
      // One key per logical payment, reused by every retry.
      return callWithRetries(client, createPayment, { paymentId, amountCents }, uuidv7(), options);
    },
    close: () => client.close(),
  };
}
