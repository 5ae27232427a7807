// Compile-time check (tsc, no test run) that index.d.ts matches what src/index.mjs exports.
import type * as Declared from '@idemq/services';
import * as implementation from '../src/index.mjs';

export const matchesDeclarations: typeof Declared = implementation;
