import type { RecordId, Store } from '../store/Store.js';

export interface LeaseKeeperOptions {
  store: Store;
  record: RecordId;
  token: string;
  leaseMs: number;
  /** After each successful renewal. */
  onRenewed: (leaseMs: number) => void;
  /** Once, when the lease is lost for sure or can no longer be proven held. */
  onLost: () => void;
  /** `performance.now()` when the claim was sent: the lease is counted from there. */
  heldSince: number;
}

export interface LeaseKeeper {
  stop(): void;
  /**
   * Lease left by this process's own monotonic clock, counted from when the last successful
   * claim or renewal was *sent*: a lower bound that holds even when timers were starved.
   */
  remainingMs(): number;
}

/**
 * Renews a claim every `leaseMs / 3` while a handler runs. The lease counts as lost when the
 * store refuses the token, or when no renewal has succeeded for a whole lease (the store may
 * have been unreachable while another process took over).
 */
export function startLeaseKeeper(options: LeaseKeeperOptions): LeaseKeeper {
  const { store, record, token, leaseMs } = options;
  const intervalMs = Math.max(1, Math.floor(leaseMs / 3));
  let lastHeldAt = options.heldSince;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const lose = () => {
    if (stopped) return;
    stopped = true;
    options.onLost();
  };

  const tick = async () => {
    if (stopped) return;
    const startedAt = performance.now();
    try {
      const outcome = await store.renew({ ...record, token, leaseMs });
      if (outcome === 'lease-lost') return lose();
      lastHeldAt = startedAt;
      if (!stopped) options.onRenewed(leaseMs);
    } catch {
      if (performance.now() - lastHeldAt >= leaseMs) return lose();
    }
    schedule();
  };

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(tick, intervalMs);
    timer.unref();
  };

  schedule();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
    remainingMs: () => Math.max(0, leaseMs - (performance.now() - lastHeldAt)),
  };
}
