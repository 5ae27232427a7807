import type { Store } from '../store/store.js';
import { EarliestTimer } from '../timing/earliestTimer.js';

/** The claim a lease keeper renews. */
export interface HeldClaim {
  scope: string;
  requestId: string;
  /** The owner token the claim was taken with. */
  token: string;
}

/** Told what becomes of a held lease (an object, not two closures per message). */
export interface LeaseListener {
  /** After each successful renewal. */
  leaseRenewed(leaseMs: number): void;
  /** Once, when the lease is lost for sure or can no longer be proven held. */
  leaseLost(): void;
}

export interface LeaseKeeper {
  stop(): void;
  /**
   * Lease left by this process's own monotonic clock, counted from when the last successful
   * claim or renewal was *sent*: a lower bound that holds even when timers were starved.
   */
  remainingMs(): number;
}

/** One held claim: renewed every `leaseMs / 3` until stopped or lost. */
class HeldLease implements LeaseKeeper {
  readonly intervalMs: number;
  /** When the next renewal is due (`performance.now()` ms). */
  dueAt: number;
  /** When the last successful claim or renewal was sent. */
  lastHeldAt: number;
  stopped = false;
  renewing = false;

  constructor(
    readonly claim: HeldClaim,
    readonly leaseMs: number,
    /** `performance.now()` when the claim was sent: the lease is counted from there. */
    heldSince: number,
    readonly listener: LeaseListener,
    private readonly now: () => number,
    /** The scheduler's set of held leases: a stopped lease leaves it at once. */
    private readonly registry: Set<HeldLease>,
  ) {
    this.intervalMs = Math.max(1, Math.floor(leaseMs / 3));
    this.lastHeldAt = heldSince;
    this.dueAt = heldSince + this.intervalMs;
  }

  stop(): void {
    this.stopped = true;
    this.registry.delete(this);
  }

  remainingMs(): number {
    return Math.max(0, this.leaseMs - (this.now() - this.lastHeldAt));
  }

  lose(): void {
    if (this.stopped) return;
    this.stop();
    this.listener.leaseLost();
  }
}

/**
 * Keeps the leases of every claim one engine holds, with one timer for all of them instead of a
 * `setTimeout` per message: the timer is armed for the earliest renewal due, and when it fires
 * every lease due within the next quarter interval is renewed at once (a renewal may come early,
 * never late), so concurrent renewals leave together and the store can coalesce them into one
 * call. Registering and stopping a lease is a Set insert and delete: the common no-renewal run
 * (handler shorter than `leaseMs / 3`) never touches a timer of its own.
 *
 * The lease counts as lost when the store refuses the token, or when no renewal has succeeded for
 * a whole lease (the store may have been unreachable while another process took over).
 */
export class RenewalScheduler {
  private readonly held = new Set<HeldLease>();
  private readonly timer: EarliestTimer;

  constructor(
    private readonly store: Store,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.timer = new EarliestTimer((at) => this.sweep(at), now);
  }

  /**
   * Starts renewing `claim` (sent at `heldSince`, a `performance.now()` time) every
   * `leaseMs / 3`; `stop()` the keeper when the handler is done.
   */
  keep(claim: HeldClaim, leaseMs: number, heldSince: number, listener: LeaseListener): LeaseKeeper {
    const lease = new HeldLease(claim, leaseMs, heldSince, listener, this.now, this.held);
    this.held.add(lease);
    this.timer.request(lease.dueAt);
    return lease;
  }

  /** Leases held and not stopped. */
  get size(): number {
    return this.held.size;
  }

  /** Renews what is due; returns when the timer is needed next. */
  private sweep(now: number): number | undefined {
    let next = Number.POSITIVE_INFINITY;
    for (const lease of this.held) {
      if (lease.renewing) continue;
      if (lease.dueAt <= now + lease.intervalMs / 4) {
        void this.renew(lease);
      } else if (lease.dueAt < next) {
        next = lease.dueAt;
      }
    }
    return next === Number.POSITIVE_INFINITY ? undefined : next;
  }

  private async renew(lease: HeldLease): Promise<void> {
    const { claim, leaseMs } = lease;
    lease.renewing = true;
    const startedAt = this.now();
    try {
      const outcome = await this.store.renew({
        scope: claim.scope,
        requestId: claim.requestId,
        token: claim.token,
        leaseMs,
      });
      if (outcome === 'lease-lost') return lease.lose();
      lease.lastHeldAt = startedAt;
      if (!lease.stopped) lease.listener.leaseRenewed(leaseMs);
    } catch {
      if (this.now() - lease.lastHeldAt >= leaseMs) return lease.lose();
    } finally {
      lease.renewing = false;
    }
    if (lease.stopped) return;
    lease.dueAt = this.now() + lease.intervalMs;
    this.timer.request(lease.dueAt);
  }
}
