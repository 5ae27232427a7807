/**
 * The names of idemq's own headers (Kafka, AMQP) and message attributes (SQS), every broker
 * alike: `x-idemq-` and lowercase words joined by hyphens. The scheme fits each broker's rules
 * (SQS attribute names: letters, digits, `-`, `_`, `.`, at most 256 characters, never starting
 * with `AWS.` or `Amazon.`) and keeps clear of the user's own headers. docs/design.md ("On the
 * wire") lists them with the names adapters wrote before, which they still read.
 */
export const WireNames = {
  /** The requestId, where the broker has no message-id field that holds it (or as configured). */
  requestId: 'x-idemq-request-id',
  /** The ordering key, where the broker has no key of its own that survives a retry. */
  key: 'x-idemq-key',
  /** The body's content type, where the broker has no property for it (SQS). */
  contentType: 'x-idemq-content-type',
  /** The user's headers packed into one attribute (SQS: at most 10 attributes a message). */
  headers: 'x-idemq-headers',
  /** How the body was made fit for a text-only broker (SQS: `base64`, `empty`). */
  bodyEncoding: 'x-idemq-body-encoding',
  /** The attempt a copy the transport re-published (retry, release) is. */
  attempt: 'x-idemq-attempt',
  /** Epoch ms before which a delayed copy must not be handed to the handler. */
  notBefore: 'x-idemq-not-before',
  /** Epoch ms by which a copy waiting in a delay queue is due back (RabbitMQ retry tiers). */
  due: 'x-idemq-due',
  /** The consumer group a retried copy belongs to (Kafka retry topics: other groups skip it). */
  group: 'x-idemq-group',
  /** Dead letters: why, in words (capped: see `deadLetterHeaders`). */
  reason: 'x-idemq-reason',
  /** Dead letters: the `IDEMQ_ERR_*` code of the cause, when there is one. */
  code: 'x-idemq-code',
  /** Dead letters: the attempts made. */
  attempts: 'x-idemq-attempts',
  /** Dead letters: the source (queue or topic) the message was consumed from. */
  source: 'x-idemq-source',
  /** Dead letters on Kafka: the topic, partition and offset the record was consumed at. */
  originalTopic: 'x-idemq-original-topic',
  originalPartition: 'x-idemq-original-partition',
  originalOffset: 'x-idemq-original-offset',
  /** A received message whose transport could not decode part of it says what, here. */
  decodeError: 'x-idemq-decode-error',
} as const;

export type WireName = (typeof WireNames)[keyof typeof WireNames];
