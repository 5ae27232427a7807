/**
 * One unref'd timer shared by many deadlines: it is armed for the earliest time asked for and,
 * when it fires, asks its owner for the next one. Per-item `setTimeout` + `clearTimeout` costs
 * a timer-list insert and removal per message; here a deadline that is later than the armed one
 * costs a comparison, and a finished item needs no clearing at all (the owner skips it when the
 * timer fires).
 */
export class EarliestTimer {
  private timer: NodeJS.Timeout | undefined;
  /** When the armed timer fires (`performance.now()` ms); Infinity when none is armed. */
  private armedFor = Number.POSITIVE_INFINITY;

  /**
   * @param fire runs when the timer fires, with the current time; returns the next time it is
   *   needed, or undefined when nothing is waiting.
   */
  constructor(
    private readonly fire: (now: number) => number | undefined,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Makes sure the timer fires no later than `at` (a `performance.now()` time). */
  request(at: number): void {
    if (at >= this.armedFor) return;
    if (this.timer) clearTimeout(this.timer);
    this.armedFor = at;
    // Rounded up: a timer that fires a fraction early would find the deadline not yet due.
    this.timer = setTimeout(() => this.onTimer(), Math.max(0, Math.ceil(at - this.now())));
    this.timer.unref();
  }

  /** Disarms the timer (the owner has nothing left to wait for). */
  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
  }

  private onTimer(): void {
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    const next = this.fire(this.now());
    if (next !== undefined) this.request(next);
  }
}
