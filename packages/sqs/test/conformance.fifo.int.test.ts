import { runTransportConformance } from '@idemq/conformance';
import { afterAll } from 'vitest';
import { sqsHarness } from './conformanceHarness.js';
import { EXPECTED_CAPABILITIES } from './expectedCapabilities.js';
import { adminClient, QueueFactory } from './helpers.js';

// The transport contract on FIFO queues, dead letters sent explicitly to <base>-dlq.fifo, with
// short polls (waitTimeMs 0): the standard file covers long polls; this keeps the run short.
const admin = adminClient();
const queues = new QueueFactory(admin);
afterAll(async () => {
  await queues.deleteAll();
  admin.destroy();
});

runTransportConformance(
  sqsHarness(
    'sqs (FIFO queues, short polling)',
    { fifo: true, waitTimeMs: 0 },
    EXPECTED_CAPABILITIES.fifo,
    admin,
    queues,
  ),
);
