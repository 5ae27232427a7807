export {
  REDIS_STORE_DEFAULTS,
  type RedisStore,
  type RedisStoreOptions,
  redisStore,
} from './redisStore.js';
export type { RedisClient } from './scriptRunner.js';
export { MIN_REDIS_VERSION, type SelfTestReport, UnsupportedServerError } from './selfTest.js';
export { keySlot } from './slot.js';
