export { Attributes as MessageAttributeNames, DECODE_ERROR_HEADER } from './attributes.js';
export { CloudEventsAttributes } from './cloudEvents.js';
export {
  DelayTooLongError,
  MAX_VISIBILITY_MS,
  PayloadTooLargeError,
  PublishFailedError,
  TransportUnavailableError,
} from './errors.js';
export { SQS_DEFAULTS, SQS_MAX_MESSAGE_BYTES, type SqsTransportOptions } from './options.js';
export {
  type DeclaredQueue,
  type DeclareQueueOptions,
  deadLetterNameOf,
  declareQueue,
  deleteQueue,
  type QueueDepth,
  queueDepth,
} from './queues.js';
export { type SqsTransport, sqs, sqsCapabilities } from './sqs.js';
