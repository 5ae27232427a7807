/**
 * Headers of a CloudEvent in binary mode, per the CloudEvents Kafka protocol binding (attributes
 * prefixed `ce_`; `datacontenttype` is the `content-type` header). The consumer makes its
 * requestId from them with `requestIdFrom: 'cloudevents'`.
 */
export const CloudEventsHeaders = {
  id: 'ce_id',
  source: 'ce_source',
} as const;
