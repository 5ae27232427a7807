import { IDEMPOTENCY_DEFAULTS, type Store } from '@idemq/core';
import { DEFAULT_MAX_STORED_BODY_BYTES, OptionsCheck } from '@idemq/core/adapter';
import { isKeyMetadataName } from './metadataName.js';
import { readGuardedMethods } from './methods.js';
import { storedByDefault } from './statusPolicy.js';
import type { GrpcIdempotencyOptions, GuardableMethod, GuardedCall } from './types.js';

export const GRPC_IDEMPOTENCY_DEFAULTS = Object.freeze({
  scope: 'grpc',
  required: true,
  metadataKey: 'idempotency-key',
  maxKeyLength: 255,
  ttlMs: IDEMPOTENCY_DEFAULTS.completedTtlMs,
  onStoreError: 'fail',
  maxResponseBytes: DEFAULT_MAX_STORED_BODY_BYTES,
} as const);

/** The options with every default filled in. */
export interface GrpcSettings {
  store: Store;
  scope: string;
  guarded: ReadonlyMap<string, GuardableMethod>;
  required: boolean;
  metadataKey: string;
  key: ((call: GuardedCall) => string | undefined) | undefined;
  maxKeyLength: number;
  principal: GrpcIdempotencyOptions['principal'];
  /** What the engine fingerprints: by default the request bytes themselves (the scope has the path). */
  fingerprint: (
    call: GuardedCall,
    requestBytes: Uint8Array,
  ) => string | Uint8Array | Promise<string>;
  replayMetadata: ReadonlySet<string>;
  storeStatus: (code: number) => boolean;
  maxResponseBytes: number;
}

/** Checks every option (one `InvalidOptionsError` listing all problems) and fills defaults. */
export function resolveGrpcSettings(options: GrpcIdempotencyOptions): GrpcSettings {
  const check = new OptionsCheck('idempotencyInterceptor');
  if (typeof options !== 'object' || options === null) {
    check.expect(false, 'options must be an object').done();
  }
  const methods = readGuardedMethods(options.methods);
  for (const problem of methods.problems) check.expect(false, problem);
  check
    .implements('store', options.store, ['claim', 'complete', 'fail', 'renew', 'release'])
    .text('scope', options.scope, true)
    .oneOf('required', options.required, [true, false])
    .expect(
      options.metadataKey === undefined || isKeyMetadataName(options.metadataKey),
      `metadataKey must be a lower-case text metadata name outside grpc-*, got ${JSON.stringify(options.metadataKey)}`,
    )
    .fn('key', options.key, true)
    // Core refuses ids over 512 UTF-8 bytes; a key is ASCII, one byte per character.
    .integer('maxKeyLength', options.maxKeyLength, 1, IDEMPOTENCY_DEFAULTS.maxRequestIdBytes)
    .fn('principal', options.principal, true)
    .fn('fingerprint', options.fingerprint, true)
    .expect(
      options.replayMetadata === undefined ||
        (Array.isArray(options.replayMetadata) &&
          options.replayMetadata.every((name) => typeof name === 'string' && name.length > 0)),
      'replayMetadata must be an array of metadata names',
    )
    .fn('storeStatus', options.storeStatus, true)
    .oneOf('onStoreError', options.onStoreError, ['fail', 'process'])
    .integer('maxResponseBytes', options.maxResponseBytes, 0)
    .done();

  return {
    store: options.store,
    scope: options.scope ?? GRPC_IDEMPOTENCY_DEFAULTS.scope,
    guarded: methods.guarded,
    required: options.required ?? GRPC_IDEMPOTENCY_DEFAULTS.required,
    metadataKey: options.metadataKey ?? GRPC_IDEMPOTENCY_DEFAULTS.metadataKey,
    key: options.key,
    maxKeyLength: options.maxKeyLength ?? GRPC_IDEMPOTENCY_DEFAULTS.maxKeyLength,
    principal: options.principal,
    fingerprint: options.fingerprint ?? ((_call, requestBytes) => requestBytes),
    replayMetadata: new Set((options.replayMetadata ?? []).map((name) => name.toLowerCase())),
    storeStatus: options.storeStatus ?? storedByDefault,
    maxResponseBytes: options.maxResponseBytes ?? GRPC_IDEMPOTENCY_DEFAULTS.maxResponseBytes,
  };
}
