import { runTransportConformance } from '@idemq/conformance';
import { rabbitmqHarness } from './harness.js';

// The transport contract against a real RabbitMQ, on quorum queues.
runTransportConformance(rabbitmqHarness('quorum'));
