// @ts-check
// `node --import @idemq/services/register-ts`: lets a child process import a package's
// TypeScript sources without a build (types are stripped by the TypeScript compiler, nothing is
// checked; the typecheck script does that).
import { register } from 'node:module';

register('./tsHooks.mjs', import.meta.url);
