import {
  type Metadata,
  ServerInterceptingCall,
  type ServerInterceptingCallInterface,
  type ServerInterceptor,
} from '@grpc/grpc-js';
import type { HandlerContext } from '@idemq/core';
import {
  createResponseGuard,
  type ProducedResponse,
  type ResponseGuard,
  requestScope,
} from '@idemq/core/adapter';
import { type GrpcAnswer, grpcAnswers, sendAnswer, storedAnswer } from './answers.js';
import { attachContext } from './context.js';
import { HandlerResponse } from './handlerResponse.js';
import { readKey } from './key.js';
import { type GrpcSettings, resolveGrpcSettings } from './options.js';
import { refusalStatus } from './refusals.js';
import type { GrpcIdempotencyOptions, GuardableMethod, GuardedCall } from './types.js';

/**
 * A grpc-js server interceptor that runs each guarded unary method once per idempotency key:
 * retries get the first response (OK or a stored error status), a retry while it runs gets
 * ABORTED with the lease time left as `google.rpc.RetryInfo` (see the package README).
 *
 * @example
 * const server = new Server({
 *   interceptors: [idempotencyInterceptor({ store, methods: [PaymentsService] })],
 * });
 */
export function idempotencyInterceptor(options: GrpcIdempotencyOptions): ServerInterceptor {
  const settings = resolveGrpcSettings(options);
  const guard = createResponseGuard({ ...options, scope: settings.scope });
  return (descriptor, call) => {
    const method = settings.guarded.get(descriptor.path);
    return method === undefined
      ? new ServerInterceptingCall(call)
      : guardedCall(settings, guard, method, call);
  };
}

/** One call of a guarded method: the request is held until its key is claimed. */
function guardedCall(
  settings: GrpcSettings,
  guard: ResponseGuard,
  method: GuardableMethod,
  call: ServerInterceptingCallInterface,
): ServerInterceptingCall {
  const response = new HandlerResponse(method.path);
  let metadata: Metadata | undefined;
  return new ServerInterceptingCall(call, {
    start(next) {
      next({
        onReceiveMetadata(received, pass) {
          metadata = received;
          pass(received);
        },
        onReceiveMessage(message, pass) {
          const request: GuardedCall = {
            method: method.path,
            metadata: metadata as Metadata,
            request: message,
          };
          void serve(settings, guard, method, call, request, response, () => pass(message));
        },
        onReceiveHalfClose(pass) {
          response.handlerStarted();
          pass();
        },
        onCancel() {
          response.onCancel();
        },
      });
    },
    sendMetadata: (sent, next) => response.onMetadata(sent, next),
    sendMessage: (message, next) => response.onMessage(message, next),
    sendStatus: (sent, next) => response.onStatus(sent, next),
  });
}

/** Decides the call's answer and sends it; never rejects. */
async function serve(
  settings: GrpcSettings,
  guard: ResponseGuard,
  method: GuardableMethod,
  call: ServerInterceptingCallInterface,
  request: GuardedCall,
  response: HandlerResponse,
  forward: () => void,
): Promise<void> {
  try {
    const answer = await decide(settings, guard, method, request, response, forward);
    sendAnswer(call, method, response, answer);
  } catch (error) {
    sendAnswer(call, method, response, unexpected(error));
  }
}

/** Reads the key, claims it and runs the handler, or answers without it. */
async function decide(
  settings: GrpcSettings,
  guard: ResponseGuard,
  method: GuardableMethod,
  call: GuardedCall,
  response: HandlerResponse,
  forward: () => void,
): Promise<GrpcAnswer> {
  const read = readKey(
    settings.key ? [settings.key(call)] : call.metadata.get(settings.metadataKey),
    settings.maxKeyLength,
  );
  if (read.kind === 'missing') {
    if (!settings.required) return { kind: 'pass', forward };
    return refusal('key-missing', `${call.method} needs an ${keySource(settings)}`);
  }
  if (read.kind === 'malformed')
    return refusal('key-malformed', `${keySource(settings)}: ${read.reason}`);
  const key = read.key;
  // Hooks may be async; the defaults are not, and an await costs a turn of the event loop.
  const principal = settings.principal ? await settings.principal(call) : undefined;
  const requestBytes = method.requestSerialize(call.request as never);
  const fingerprint = settings.fingerprint(call, requestBytes);
  const payload = fingerprint instanceof Promise ? await fingerprint : fingerprint;
  return guard(
    {
      key,
      scope: requestScope(settings.scope, call.method, principal),
      payload,
      produce: (ctx) => runHandler(settings, method, call, key, ctx, response, forward),
    },
    grpcAnswers,
  );
}

/** Hands the request to the handler under the claim and reads its answer for storing. */
async function runHandler(
  settings: GrpcSettings,
  method: GuardableMethod,
  call: GuardedCall,
  key: string,
  ctx: HandlerContext,
  response: HandlerResponse,
  forward: () => void,
): Promise<ProducedResponse<GrpcAnswer>> {
  attachContext(call.metadata, {
    idempotencyKey: key,
    fencingToken: ctx.fencingToken,
    attempt: ctx.attempt,
    signal: ctx.signal,
    transaction: ctx.transaction,
  });
  forward();
  const answer = await response.answer();
  return {
    stored: storedAnswer(settings, method, answer),
    answer: { kind: 'release' },
    storable: settings.storeStatus(answer.status.code),
  };
}

function keySource(settings: GrpcSettings): string {
  return settings.key
    ? 'idempotency key (from the key option)'
    : `${settings.metadataKey} metadata entry`;
}

function refusal(kind: 'key-missing' | 'key-malformed', detail: string): GrpcAnswer {
  return { kind: 'status', status: refusalStatus({ kind, detail }) };
}

/** A hook that threw (key, principal, fingerprint) or a stored reply that no longer decodes: INTERNAL. */
function unexpected(error: unknown): GrpcAnswer {
  const detail = `idempotency: ${error instanceof Error ? error.message : String(error)}`;
  return { kind: 'status', status: refusalStatus({ kind: 'handler-failed', detail }) };
}
