/**
 * The publisher's plan: healthy and poison ids, which are sent more than once, and when. A
 * duplicate copy goes out right behind its original (both race for the record) or later (it must
 * be skipped as a duplicate).
 */
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Transport } from '@idemq/core';
import type { ChaosBody } from './worker.js';

export interface PublishItem {
  requestId: string;
  body: ChaosBody;
}

export interface PublishPlan {
  healthy: string[];
  poison: string[];
  /** Copies in publish order: originals with their concurrent copies, then the late copies. */
  order: PublishItem[];
  /** Copies beyond the first of each id. */
  duplicatesInjected: number;
}

export function planPublishing(
  tag: string,
  messages: number,
  poisonCount: number,
  duplicateRate: number,
  random: () => number,
): PublishPlan {
  const healthy = Array.from({ length: messages }, (_, i) => `${tag}-h${i}`);
  const poison = Array.from({ length: poisonCount }, (_, i) => `${tag}-p${i}`);
  const items: PublishItem[] = [
    ...healthy.map((requestId) => ({ requestId, body: {} })),
    ...poison.map((requestId) => ({ requestId, body: { poison: true } })),
  ];
  // Poison spread through the stream, so the healthy ones behind it show they keep flowing.
  items.sort(() => random() - 0.5);
  const order: PublishItem[] = [];
  const late: PublishItem[] = [];
  let duplicatesInjected = 0;
  for (const item of items) {
    order.push(item);
    if (random() >= duplicateRate) continue;
    // Two or more copies: one in five ids gets a third.
    const extra = random() < 0.2 ? 2 : 1;
    for (let copy = 0; copy < extra; copy++) {
      (random() < 0.5 ? order : late).push(item);
      duplicatesInjected++;
    }
  }
  order.push(...late);
  return { healthy, poison, order, duplicatesInjected };
}

/**
 * Publishes `order` with at most `parallel` publishes in flight, spread evenly over `overMs`
 * (0: as fast as the broker takes them).
 */
export async function publishAll(
  transport: Transport,
  destination: string,
  order: readonly PublishItem[],
  overMs: number,
  signal?: AbortSignal,
  parallel = 32,
): Promise<void> {
  const startedAt = performance.now();
  // Every lane may sleep on the run's signal at once: `parallel` listeners is the plan, not a leak.
  if (signal) setMaxListeners(parallel + 10, signal);
  let next = 0;
  const lane = async () => {
    while (next < order.length) {
      signal?.throwIfAborted();
      const index = next++;
      const item = order[index]!;
      if (overMs > 0) {
        const due = startedAt + (overMs * index) / order.length;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait, undefined, { signal });
      }
      await transport.publish(destination, { requestId: item.requestId, body: item.body });
    }
  };
  await Promise.all(Array.from({ length: parallel }, lane));
}
