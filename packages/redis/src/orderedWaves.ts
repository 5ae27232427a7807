/**
 * Splits a batch (`claimMany`, `completeMany`) into waves sent one after another, so that the
 * operations on one id run in request order. A batch is sent as one script call per settings
 * (and slot), all at once: one call runs its keys in order, and calls for one key reach its node
 * on one connection in the order sent, but calls of different settings may run in either order.
 * So a repeat of an id with other settings than the id's previous operation waits for the next
 * wave; a batch without such a repeat is one wave.
 */
export function orderedWaves<T>(
  entries: readonly T[],
  keyOf: (entry: T) => string,
  settingsOf: (entry: T) => string,
): T[][] {
  const waves: T[][] = [];
  const last = new Map<string, { wave: number; settings: string }>();
  for (const entry of entries) {
    const key = keyOf(entry);
    const settings = settingsOf(entry);
    const previous = last.get(key);
    let wave = 0;
    if (previous) wave = previous.settings === settings ? previous.wave : previous.wave + 1;
    last.set(key, { wave, settings });
    const members = waves[wave];
    if (members) members.push(entry);
    else waves[wave] = [entry];
  }
  return waves;
}
