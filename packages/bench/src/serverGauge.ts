import type { CommandCounts } from './commandCounter.js';

/** What the server did during one measured phase: everyone's work, not the contender's alone. */
export interface ServerPhase {
  /** Commands the server ran by name (Redis `INFO commandstats`); total NaN where not read. */
  commands: CommandCounts;
  /** CPU time (user + system) the server spent, µs; NaN where it cannot be read. */
  cpuMicros: number;
  /** Growth of what the server holds for the records (Redis `used_memory`, a table's size). */
  memoryBytes: number;
  /** Connections of other clients that were busy meanwhile (PostgreSQL; 0 where not read). */
  otherClients: number;
}

/** Reads a contender's server around each measured phase, and empties its records after a round. */
export interface ServerGauge {
  /** Runs `phase` between two readings of the server. */
  around<T>(phase: () => Promise<T>): Promise<{ value: T; server: ServerPhase }>;
  /** Deletes every record the contender wrote; resolves how many there were. */
  clear(): Promise<number>;
  close(): Promise<void>;
}
