export { CloudEventsHeaders } from './cloudEvents.js';
export {
  PublishFailedError,
  type PublishFailure,
  RabbitmqErrorCodes,
  TransportUnavailableError,
} from './errors.js';
export { InternalHeaders } from './headers.js';
export {
  type AmqpConnection,
  defaultQueueName,
  type QueueType,
  RABBITMQ_DEFAULTS,
  type RabbitmqOptions,
} from './options.js';
export { type RabbitmqTransport, rabbitmq, rabbitmqCapabilities } from './rabbitmq.js';
export { chooseTier, type TierChoice } from './tiers.js';
export type { SubscriptionTopology } from './topology.js';
