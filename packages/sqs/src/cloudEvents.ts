/**
 * Message attributes read from producers that are not idemq. SQS has no content-type field and
 * CloudEvents has no SQS binding: the names follow the Kafka binding (`ce_` prefix, a
 * `content-type` header), which the draft SNS binding also used, so one producer's code can
 * write the same names to Kafka and SQS. The consumer makes its requestId from `ce_id` and
 * `ce_source` with `requestIdFrom: 'cloudevents'`.
 */
export const CloudEventsAttributes = {
  id: 'ce_id',
  source: 'ce_source',
  /** The body's content type when idemq's own attribute is absent. */
  contentType: 'content-type',
  /** The draft SNS binding's name for the same, read when `content-type` is absent. */
  dataContentType: 'ce_datacontenttype',
} as const;
