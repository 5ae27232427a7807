import { runTransportConformance } from '@idemq/conformance';
import { rabbitmqHarness } from './harness.js';

// The transport contract against a real RabbitMQ, on classic queues.
runTransportConformance(rabbitmqHarness('classic'));
