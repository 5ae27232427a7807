import { type Metadata, type ServerInterceptingCallInterface, status } from '@grpc/grpc-js';
import { allowListedLines, type ResponseFront, type StoredResponse } from '@idemq/core/adapter';
import type { HandlerAnswer, HandlerResponse, SentStatus } from './handlerResponse.js';
import { metadataLines, metadataOf } from './metadataLines.js';
import type { GrpcSettings } from './options.js';
import { BODY_OMITTED_METADATA, REPLAYED_METADATA, refusalStatus } from './refusals.js';
import type { GuardableMethod } from './types.js';

/** How a guarded call ends. */
export type GrpcAnswer =
  /** Unguarded (no key, not required): the handler gets the request and answers as usual. */
  | { kind: 'pass'; forward: () => void }
  /** The handler's own answer, whose status was held until its outcome was recorded. */
  | { kind: 'release' }
  /** A status of the interceptor's, sent Trailers-Only. */
  | { kind: 'status'; status: SentStatus }
  | { kind: 'replay'; stored: StoredResponse | undefined };

/** gRPC's refusals and replays for core's response guard. */
export const grpcAnswers: ResponseFront<GrpcAnswer> = {
  refuse: (refusal) => ({ kind: 'status', status: refusalStatus(refusal) }),
  replay: (stored) => ({ kind: 'replay', stored }),
};

/** The handler's answer as stored: status, allow-listed metadata, message bytes up to the limit. */
export function storedAnswer(
  settings: GrpcSettings,
  method: GuardableMethod,
  answer: HandlerAnswer,
): StoredResponse {
  const { code, details, metadata: trailing } = answer.status;
  const stored: StoredResponse = {
    status: code,
    headers: replayedLines(settings, answer.metadata),
  };
  const trailers = replayedLines(settings, trailing);
  if (trailers.length > 0) stored.trailers = trailers;
  if (code !== status.OK) {
    stored.message = details;
    return stored;
  }
  if (!answer.hasMessage) return stored;
  const bytes = method.responseSerialize(answer.message as never);
  if (bytes.byteLength > settings.maxResponseBytes) stored.bodyOmitted = 'too-large';
  else stored.body = bytes;
  return stored;
}

/** The allow-listed lines of `metadata`; none to read when nothing is allow-listed. */
function replayedLines(settings: GrpcSettings, metadata: Metadata | null | undefined) {
  if (settings.replayMetadata.size === 0 || !metadata) return [];
  return allowListedLines(metadataLines(metadata), settings.replayMetadata);
}

/** Ends the call with its answer. */
export function sendAnswer(
  call: ServerInterceptingCallInterface,
  method: GuardableMethod,
  response: HandlerResponse,
  answer: GrpcAnswer,
): void {
  switch (answer.kind) {
    case 'pass':
      response.passThrough();
      answer.forward();
      return;
    case 'release':
      response.release();
      return;
    case 'status':
      call.sendStatus(answer.status);
      return;
    case 'replay':
      replay(call, method, answer.stored);
  }
}

/** The stored answer again, marked `idempotent-replayed: true`. */
function replay(
  call: ServerInterceptingCallInterface,
  method: GuardableMethod,
  stored: StoredResponse | undefined,
): void {
  if (stored === undefined || (stored.status === status.OK && stored.body === undefined)) {
    // Completed, but its response is not kept: say so rather than invent one.
    const metadata = replayedMetadata(stored?.headers, stored?.trailers);
    metadata.set(BODY_OMITTED_METADATA, stored?.bodyOmitted ?? 'too-large');
    call.sendStatus({
      code: status.ALREADY_EXISTS,
      details: 'This idempotency key completed; its response was too large to keep for replays',
      metadata,
    });
    return;
  }
  if (stored.status !== status.OK) {
    call.sendStatus({
      code: stored.status,
      details: stored.message ?? '',
      metadata: replayedMetadata(stored.headers, stored.trailers),
    });
    return;
  }
  const message = method.responseDeserialize(Buffer.from(stored.body as Uint8Array));
  call.sendMetadata(replayedMetadata(stored.headers));
  call.sendMessage(message, () =>
    call.sendStatus({ code: status.OK, details: 'OK', metadata: metadataOf(stored.trailers) }),
  );
}

function replayedMetadata(...lines: (StoredResponse['headers'] | undefined)[]): Metadata {
  const metadata = metadataOf(lines.flatMap((part) => part ?? []));
  metadata.set(REPLAYED_METADATA, 'true');
  return metadata;
}
