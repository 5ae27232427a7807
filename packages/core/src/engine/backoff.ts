import type { RetryPolicy } from './types.js';

/**
 * Delay before retry number `attempt` (1-based): exponential from `baseDelayMs`, capped at
 * `maxDelayMs`; with full jitter a uniform draw in [0, that], which spreads retry storms.
 */
export function backoffDelayMs(
  attempt: number,
  policy: Required<RetryPolicy>,
  random: () => number = Math.random,
): number {
  const exponent = Math.max(0, attempt - 1);
  const capped = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(exponent, 30));
  return policy.jitter === 'full' ? Math.floor(random() * capped) : capped;
}
