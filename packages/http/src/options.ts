import { IDEMPOTENCY_DEFAULTS, type Store } from '@idemq/core';
import { DEFAULT_MAX_STORED_BODY_BYTES, OptionsCheck } from '@idemq/core/adapter';
import { defaultFingerprint } from './fingerprint.js';
import { replayAllowList } from './replayHeaders.js';
import type { HttpIdempotencyOptions } from './types.js';

export const HTTP_IDEMPOTENCY_DEFAULTS = Object.freeze({
  scope: 'http',
  required: true,
  methods: Object.freeze(['POST', 'PATCH']),
  headerName: 'Idempotency-Key',
  maxKeyLength: 255,
  ttlMs: IDEMPOTENCY_DEFAULTS.completedTtlMs,
  onStoreError: 'fail',
  maxResponseBytes: DEFAULT_MAX_STORED_BODY_BYTES,
} as const);

/** How the defaults read a request: its method, its path and its target (path and query). */
export interface RequestReader<Req> {
  method(request: Req): string;
  path(request: Req): string;
  target(request: Req): string;
}

/** The options with every default filled in. */
export interface HttpSettings<Req> {
  store: Store;
  scope: string;
  required: boolean;
  methods: ReadonlySet<string>;
  headerName: string;
  /** Node's request headers are keyed in lower case. */
  headerNameLower: string;
  maxKeyLength: number;
  route: (request: Req) => string;
  principal: HttpIdempotencyOptions<Req>['principal'];
  fingerprint: (request: Req, body: Uint8Array) => string | Promise<string>;
  replayHeaders: ReadonlySet<string>;
  storeStatus: (status: number) => boolean;
  maxResponseBytes: number;
}

/** Checks every option (one `InvalidOptionsError` listing all problems) and fills defaults. */
export function resolveHttpSettings<Req>(
  options: HttpIdempotencyOptions<Req>,
  reader: RequestReader<Req>,
  caller = 'createHttpIdempotency',
): HttpSettings<Req> {
  const check = new OptionsCheck(caller);
  if (typeof options !== 'object' || options === null) {
    check.expect(false, 'options must be an object').done();
  }
  check
    .implements('store', options.store, ['claim', 'complete', 'fail', 'renew', 'release'])
    .text('scope', options.scope, true)
    .oneOf('required', options.required, [true, false])
    .expect(
      options.methods === undefined ||
        (Array.isArray(options.methods) &&
          options.methods.every((m) => typeof m === 'string' && /^[A-Za-z]+$/.test(m))),
      'methods must be an array of method names',
    )
    .expect(
      options.headerName === undefined ||
        (typeof options.headerName === 'string' &&
          /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(options.headerName)),
      `headerName must be a header field name, got ${JSON.stringify(options.headerName)}`,
    )
    // Core refuses ids over 512 UTF-8 bytes; a key is ASCII, one byte per character.
    .integer('maxKeyLength', options.maxKeyLength, 1, IDEMPOTENCY_DEFAULTS.maxRequestIdBytes)
    .fn('route', options.route, true)
    .fn('principal', options.principal, true)
    .fn('fingerprint', options.fingerprint, true)
    .expect(
      options.replayHeaders === undefined ||
        (Array.isArray(options.replayHeaders) &&
          options.replayHeaders.every((name) => typeof name === 'string' && name.length > 0)),
      'replayHeaders must be an array of header names',
    )
    .fn('storeStatus', options.storeStatus, true)
    .oneOf('onStoreError', options.onStoreError, ['fail', 'process'])
    .integer('maxResponseBytes', options.maxResponseBytes, 0)
    .done();

  const custom = options.fingerprint;
  const headerName = options.headerName ?? HTTP_IDEMPOTENCY_DEFAULTS.headerName;
  return {
    store: options.store,
    scope: options.scope ?? HTTP_IDEMPOTENCY_DEFAULTS.scope,
    required: options.required ?? HTTP_IDEMPOTENCY_DEFAULTS.required,
    methods: new Set(
      (options.methods ?? HTTP_IDEMPOTENCY_DEFAULTS.methods).map((m) => m.toUpperCase()),
    ),
    headerName,
    headerNameLower: headerName.toLowerCase(),
    maxKeyLength: options.maxKeyLength ?? HTTP_IDEMPOTENCY_DEFAULTS.maxKeyLength,
    route: options.route ?? ((request) => reader.path(request)),
    principal: options.principal,
    fingerprint:
      custom ??
      ((request, body) => defaultFingerprint(reader.method(request), reader.target(request), body)),
    replayHeaders: replayAllowList(options.replayHeaders),
    storeStatus: options.storeStatus ?? ((status) => status < 500),
    maxResponseBytes: options.maxResponseBytes ?? HTTP_IDEMPOTENCY_DEFAULTS.maxResponseBytes,
  };
}
