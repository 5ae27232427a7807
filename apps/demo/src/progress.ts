/**
 * Progress while the run drains: a redrawn bar on a terminal, plain lines once a second
 * elsewhere, so CI logs stay readable (no carriage returns, no escape codes).
 */

/** What the progress display reads from the running scenario. */
export interface ProgressSnapshot {
  phase: 'starting' | 'publishing' | 'draining' | 'stopping' | 'done';
  /** Copies published so far, and planned in total. */
  sent: number;
  toSend: number;
  /** Distinct ids completed or dead-lettered, out of `uniqueIds`. */
  settled: number;
  uniqueIds: number;
  retries: number;
  deadLettered: number;
  duplicatesSkipped: number;
  elapsedMs: number;
}

/** The part of a writable stream the display needs (`process.stdout` fits). */
export interface ProgressStream {
  write(chunk: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface ProgressOptions {
  stream: ProgressStream;
  snapshot: () => ProgressSnapshot;
  /** Redraw / print period. @default 80 on a terminal, 1000 otherwise */
  intervalMs?: number;
}

/** A running display; `stop()` prints the final state and ends the line. */
export interface Progress {
  stop(): void;
}

const BAR_WIDTH = 20;

/** Starts the display appropriate for `stream`. */
export function startProgress(options: ProgressOptions): Progress {
  const { stream, snapshot } = options;
  const tty = stream.isTTY === true;
  const intervalMs = options.intervalMs ?? (tty ? 80 : 1000);
  let lastPlain = '';

  const draw = () => {
    const current = snapshot();
    if (tty) {
      const line = `${renderBar(current)} ${describe(current)}`;
      // Clip to the terminal so a narrow window never wraps (wrapping breaks the redraw).
      // A pseudo-terminal may report 0 columns: assume a usual width then.
      const reported = stream.columns ?? 0;
      const columns = reported >= 20 ? reported : 100;
      stream.write(`\r\x1b[2K${line.slice(0, columns - 1)}`);
      return;
    }
    const line = `progress ${describe(current)}`;
    if (line !== lastPlain) stream.write(`${line}\n`);
    lastPlain = line;
  };

  const timer = setInterval(draw, intervalMs);
  // The display must never keep the process alive on its own.
  timer.unref();
  draw();

  let stopped = false;
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      draw();
      if (tty) stream.write('\n');
    },
  };
}

/** `[#######.....]  45%`, the share of ids settled. */
export function renderBar(snapshot: ProgressSnapshot): string {
  const ratio = snapshot.uniqueIds === 0 ? 1 : snapshot.settled / snapshot.uniqueIds;
  const filled = Math.min(BAR_WIDTH, Math.floor(ratio * BAR_WIDTH));
  const percent = `${Math.floor(ratio * 100)}%`.padStart(4);
  return `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${percent}`;
}

/** One line of figures, the same on a terminal and in a log. */
export function describe(snapshot: ProgressSnapshot): string {
  return [
    `${snapshot.phase}`,
    `settled ${snapshot.settled}/${snapshot.uniqueIds}`,
    `sent ${snapshot.sent}/${snapshot.toSend}`,
    `skipped ${snapshot.duplicatesSkipped}`,
    `retries ${snapshot.retries}`,
    `DLQ ${snapshot.deadLettered}`,
    `${(snapshot.elapsedMs / 1000).toFixed(1)}s`,
  ].join(' · ');
}
