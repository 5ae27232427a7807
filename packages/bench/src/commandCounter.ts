import type { Redis } from 'ioredis';

/** Commands sent, by lower-case name, and their total. */
export interface CommandCounts {
  total: number;
  byName: Record<string, number>;
}

/**
 * Counts the commands a contender's clients send to Redis: its round trips, measured where they
 * leave the process. Unlike `INFO commandstats` this is exact on a shared server and does not
 * count the commands a Lua script runs inside Redis.
 */
export class CommandCounter {
  private readonly byName = new Map<string, number>();
  private total = 0;

  add(name: string): void {
    const key = name.toLowerCase();
    this.byName.set(key, (this.byName.get(key) ?? 0) + 1);
    this.total += 1;
  }

  snapshot(): CommandCounts {
    return { total: this.total, byName: Object.fromEntries(this.byName) };
  }
}

/** `after - before`, name by name (names with no change left out). */
export function diffCounts(after: CommandCounts, before: CommandCounts): CommandCounts {
  const byName: Record<string, number> = {};
  for (const [name, calls] of Object.entries(after.byName)) {
    const delta = calls - (before.byName[name] ?? 0);
    if (delta !== 0) byName[name] = delta;
  }
  return { total: after.total - before.total, byName };
}

/**
 * Counts every command an ioredis client sends (pipelines and scripts included: they all pass
 * through `sendCommand`).
 */
export function countIoredis(client: Redis, counter: CommandCounter): Redis {
  const send = client.sendCommand;
  client.sendCommand = function (this: Redis, ...args: Parameters<Redis['sendCommand']>) {
    counter.add(args[0].name);
    return send.apply(this, args);
  };
  return client;
}

/** The one method of a node-redis (`@redis/client`) client every command goes through. */
interface NodeRedisSender {
  sendCommand(args: readonly unknown[], ...options: never[]): Promise<unknown>;
}

/**
 * Counts every command a node-redis (`@redis/client`) client sends. `createClient()` hands out
 * `Object.create(client)` views whose commands call `sendCommand` on the underlying client (the
 * object that owns `_self`), so that is the one wrapped.
 */
export function countNodeRedis<C extends NodeRedisSender>(client: C, counter: CommandCounter): C {
  let target: NodeRedisSender | null = client;
  while (target !== null && !Object.hasOwn(target, '_self')) {
    target = Object.getPrototypeOf(target) as NodeRedisSender | null;
  }
  const owner = target ?? client;
  const send = owner.sendCommand;
  owner.sendCommand = function (
    this: NodeRedisSender,
    ...args: Parameters<NodeRedisSender['sendCommand']>
  ) {
    counter.add(String(args[0][0]));
    return send.apply(this, args);
  };
  return client;
}
