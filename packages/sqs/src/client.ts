import { SQSClient } from '@aws-sdk/client-sqs';
import type { SqsTransportOptions } from './options.js';

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
 */
export function openClient(
  options: Pick<SqsTransportOptions, 'client' | 'clientConfig'>,
): ClientLease {
  if (options.client) return { client: options.client, owned: false };
  return { client: new SQSClient(options.clientConfig ?? {}), owned: true };
}
