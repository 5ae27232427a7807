import { type CloudEventIdentity, cloudEventIdentity } from '@idemq/core/adapter';

/**
 * Application properties (headers, in AMQP 0-9-1) of a CloudEvent in binary mode, per the
 * CloudEvents AMQP protocol binding: attributes prefixed `cloudEvents_`, or `cloudEvents:` as
 * the binding's first versions wrote (consumers should understand both). `datacontenttype` is
 * the `content-type` property. The consumer makes its requestId from them with
 * `requestIdFrom: 'cloudevents'`.
 */
export const CloudEventsHeaders = {
  id: 'cloudEvents_id',
  source: 'cloudEvents_source',
  colonId: 'cloudEvents:id',
  colonSource: 'cloudEvents:source',
} as const;

/** A message's CloudEvents id and source as found, in one separator's names. */
export function cloudEventOf(
  headers: Readonly<Record<string, unknown>>,
): CloudEventIdentity | undefined {
  const names = CloudEventsHeaders;
  // The binding has a message use one separator for all its attributes: never mix the two.
  if (headers[names.id] !== undefined || headers[names.source] !== undefined) {
    return cloudEventIdentity(headers[names.id], headers[names.source]);
  }
  return cloudEventIdentity(headers[names.colonId], headers[names.colonSource]);
}
