/**
 * `WAIT` for replicas, shared like a group commit: the operations whose replies arrive in one
 * tick wait on one `WAIT`, sent at the end of that tick, instead of a `WAIT` each. A `WAIT`
 * covers every write its connection sent before it, so one sent after an operation's reply
 * arrived covers that operation; a `WAIT` already on the wire may have left before the
 * operation's own write, so nobody joins it.
 */
export class ReplicaWaits {
  private next: Promise<void> | undefined;
  /** `WAIT` commands sent. */
  sent = 0;

  /** `send` runs one `WAIT` and rejects (typed) if too few replicas acknowledged. */
  constructor(private readonly send: () => Promise<void>) {}

  /** Resolves once the replicas hold every write this connection sent so far. */
  acknowledged(): Promise<void> {
    this.next ??= new Promise<void>((resolve, reject) => {
      process.nextTick(() => {
        this.next = undefined;
        this.sent += 1;
        this.send().then(resolve, reject);
      });
    });
    return this.next;
  }
}
