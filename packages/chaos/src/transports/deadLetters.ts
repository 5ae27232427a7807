/**
 * Reads the run's dead-letter destination back through the transport itself and writes every
 * copy, with its reason, code and attempts, to the ledger.
 */
import { DeadLetterHeaders, type Subscription, type Transport } from '@idemq/core';
import type { Ledger } from '../ledger.js';

export async function readDeadLetters(
  transport: Transport,
  deadLetterSource: string,
  ledger: Ledger,
): Promise<Subscription> {
  return transport.subscribe({
    source: deadLetterSource,
    group: 'chaos-dead-letters',
    maxInFlight: 50,
    onDelivery: (delivery) => {
      const { headers, requestId } = delivery.message;
      const attempts = headers[DeadLetterHeaders.attempts];
      void ledger
        .recordDeadLetter({
          requestId: typeof requestId === 'string' ? requestId : undefined,
          code: headers[DeadLetterHeaders.code],
          reason: headers[DeadLetterHeaders.reason],
          attempts: attempts === undefined ? undefined : Number(attempts),
        })
        .then(() => delivery.ack());
    },
  });
}
