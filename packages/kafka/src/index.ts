export type {
  AdminClient,
  ConsumerClient,
  ConsumerHandlers,
  ConsumerSettings,
  FetchedBatch,
  FetchedMessage,
  GroupJoin,
  HeaderValue,
  KafkaClient,
  OffsetCommit,
  ProducedHeaderValue,
  ProducedRecord,
  ProducerClient,
} from './client.js';
export { CloudEventsHeaders } from './cloudEvents.js';
export type { RecordOrigin } from './deadLetter.js';
export type { KafkaRawMessage } from './delivery.js';
export { PublishFailedError, TransportUnavailableError } from './errors.js';
export { KafkaHeaders } from './headers.js';
export {
  KAFKA_TRANSPORT_DEFAULTS,
  type KafkaTransport,
  type KafkaTransportOptions,
  kafka,
  kafkaCapabilities,
} from './kafka.js';
export { createKafkajs, type KafkajsConnection, kafkajsClient } from './kafkajsClient.js';
export type { RetryMode } from './retry.js';
export { Watermark } from './watermark.js';
export { ResponseFramer, wholeResponseSockets } from './wholeResponseSockets.js';
