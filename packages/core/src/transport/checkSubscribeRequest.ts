import { OptionsCheck } from '../options/optionsCheck.js';
import type { SubscribeRequest } from './transport.js';

/**
 * Validates a `subscribe` request the same way on every transport, throwing one
 * `InvalidOptionsError` that lists every bad field. `maxInFlight` is the transport's own
 * ceiling (AMQP prefetch is a 16-bit count).
 */
export function checkSubscribeRequest(
  request: SubscribeRequest,
  limits: { maxInFlight?: number } = {},
): void {
  const check = new OptionsCheck('subscribe');
  if (typeof request !== 'object' || request === null) {
    check.expect(false, 'the request must be an object').done();
  }
  check
    .text('source', request.source)
    .text('group', request.group, true)
    .integer('maxInFlight', request.maxInFlight, 1, limits.maxInFlight)
    .fn('onDelivery', request.onDelivery)
    .fn('onError', request.onError, true)
    .done();
}
