import { baselineContender } from './baseline.js';
import { fencedLuaContender } from './fencedLua.js';
import { idemqContender } from './idemq.js';
import { mqtContender } from './mqt.js';
import { postgresBaselineContender } from './postgresBaseline.js';
import { idemqPostgresContender } from './postgresIdemq.js';
import { powertoolsContender } from './powertools.js';
import type { Contender, ContenderSetup, StoreName } from './types.js';

/** Every contender, in table order. */
export const CONTENDERS = [
  'idemq',
  'idemq-cache',
  'powertools',
  'mqt',
  'fenced-lua',
  'baseline',
  'idemq-postgres',
  'postgres-baseline',
] as const;
export type ContenderName = (typeof CONTENDERS)[number];

/** Who is idemq, who is a peer (the 3× goal compares with the best peer), who is the floor. */
export const ROLE: Record<ContenderName, 'idemq' | 'peer' | 'floor' | 'baseline'> = {
  idemq: 'idemq',
  'idemq-cache': 'idemq',
  powertools: 'peer',
  mqt: 'peer',
  'fenced-lua': 'floor',
  baseline: 'baseline',
  'idemq-postgres': 'idemq',
  'postgres-baseline': 'baseline',
};

/** The server each contender keeps its records on. */
export const STORE: Record<ContenderName, StoreName> = {
  idemq: 'redis',
  'idemq-cache': 'redis',
  powertools: 'redis',
  mqt: 'redis',
  'fenced-lua': 'redis',
  baseline: 'redis',
  'idemq-postgres': 'postgres',
  'postgres-baseline': 'postgres',
};

/** The hand-written baseline of each store: the base of its rows' "× baseline". */
export const BASELINE_OF: Record<StoreName, ContenderName> = {
  redis: 'baseline',
  postgres: 'postgres-baseline',
};

export const LABEL: Record<ContenderName, string> = {
  idemq: 'idemq (createIdempotency + redisStore)',
  'idemq-cache': 'idemq + localCache',
  powertools: 'Powertools idempotency 2.35.0 (Redis)',
  mqt: 'message-queue-toolkit Redis dedup store 3.0.1',
  'fenced-lua': 'hand-written fenced Lua claim / complete (ioredis)',
  baseline: 'baseline: ioredis SET NX PX + SET PX',
  'idemq-postgres': 'idemq (createIdempotency + postgresStore)',
  'postgres-baseline': 'baseline: pg INSERT … ON CONFLICT DO NOTHING + UPDATE',
};

export function isContenderName(name: string): name is ContenderName {
  return (CONTENDERS as readonly string[]).includes(name);
}

export function createContender(name: ContenderName, setup: ContenderSetup): Promise<Contender> {
  switch (name) {
    case 'idemq':
      return idemqContender(setup, { localCache: false });
    case 'idemq-cache':
      return idemqContender(setup, { localCache: true });
    case 'powertools':
      return powertoolsContender(setup);
    case 'mqt':
      return mqtContender(setup);
    case 'fenced-lua':
      return fencedLuaContender(setup);
    case 'baseline':
      return baselineContender(setup);
    case 'idemq-postgres':
      return idemqPostgresContender(setup);
    case 'postgres-baseline':
      return postgresBaselineContender(setup);
  }
}

export type {
  Contender,
  ContenderSetup,
  Outcome,
  PostgresContender,
  RedisContender,
  StoreName,
} from './types.js';
export { STORES } from './types.js';
