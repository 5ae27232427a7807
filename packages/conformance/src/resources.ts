/**
 * Everything one case opened, closed in reverse order when the case ends — also when it fails —
 * so a failing case never leaks a subscription into the next one.
 */
export class Resources {
  private readonly closers: Array<{ what: string; close: () => unknown }> = [];
  private disposed = false;

  /** Registers a cleanup step; the last registered runs first. */
  defer(what: string, close: () => unknown): void {
    if (this.disposed) throw new Error(`Resources: cannot register ${what} after dispose`);
    this.closers.push({ what, close });
  }

  /**
   * Runs every cleanup step, even after one fails; rejects afterwards with all the failures,
   * since a `close()` that throws is itself a conformance failure.
   */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    const failures: Error[] = [];
    for (const { what, close } of this.closers.reverse()) {
      try {
        await close();
      } catch (error) {
        failures.push(new Error(`cleanup of ${what} failed: ${String(error)}`, { cause: error }));
      }
    }
    if (failures.length === 1) throw failures[0];
    if (failures.length > 1) throw new AggregateError(failures, 'several cleanup steps failed');
  }
}
