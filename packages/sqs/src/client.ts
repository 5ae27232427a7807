import { SQSClient } from '@aws-sdk/client-sqs';
import { SQS_DEFAULTS, type SqsTransportOptions } from './options.js';

/** The client a transport talks through, and whether closing the transport destroys it. */
export interface ClientLease {
  readonly client: SQSClient;
  /** True when the transport created the client, so `close()` must destroy it. */
  readonly owned: boolean;
}

/**
 * Adopts the caller's client, or creates one from `clientConfig`. Nothing here fills in
 * credentials or an endpoint: callers pointing at ElasticMQ pass them explicitly, so the SDK's
 * default credential chain (which may end at the instance-metadata endpoint) is never consulted.
 * A created client's requests time out after `requestTimeoutMs` unless `clientConfig` brings a
 * request handler of its own.
 */
export function openClient(
  options: Pick<SqsTransportOptions, 'client' | 'clientConfig' | 'requestTimeoutMs'>,
): ClientLease {
  if (options.client) return { client: options.client, owned: false };
  const config = options.clientConfig ?? {};
  const requestTimeout = options.requestTimeoutMs ?? SQS_DEFAULTS.requestTimeoutMs;
  // Without throwOnRequestTimeout the SDK's handler only logs a warning when the time is up.
  const requestHandler = config.requestHandler ?? { requestTimeout, throwOnRequestTimeout: true };
  return { client: new SQSClient({ ...config, requestHandler }), owned: true };
}
