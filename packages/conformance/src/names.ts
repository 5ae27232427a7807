import { randomUUID } from 'node:crypto';

/**
 * A name no other case (or run) uses: cases share one broker or store server and may run in
 * parallel, so destinations, groups, scopes and ids must never collide.
 */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}-${Date.now().toString(36)}`;
}
