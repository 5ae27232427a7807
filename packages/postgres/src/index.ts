import './augment.js';

export {
  POSTGRES_STORE_DEFAULTS,
  type PostgresStore,
  type PostgresStoreOptions,
  postgresStore,
} from './postgresStore.js';
export { migrate, schemaSql } from './schema.js';
export { SWEEPER_DEFAULTS, type SweeperOptions } from './sweeper.js';
export { transactionOf } from './transactionOf.js';
