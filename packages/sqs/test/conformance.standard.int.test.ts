import { runTransportConformance } from '@idemq/conformance';
import { afterAll } from 'vitest';
import { sqsHarness } from './conformanceHarness.js';
import { EXPECTED_CAPABILITIES } from './expectedCapabilities.js';
import { adminClient, QueueFactory } from './helpers.js';

// The transport contract on standard queues, declared with a RedrivePolicy (native DLQ), with
// 1 s long polls: every graceful stop and close waits for a poll in flight, as in production.
const admin = adminClient();
const queues = new QueueFactory(admin);
afterAll(async () => {
  await queues.deleteAll();
  admin.destroy();
});

runTransportConformance(
  sqsHarness(
    'sqs (standard queues, long polling, native redrive)',
    { redrive: true, waitTimeMs: 1_000 },
    EXPECTED_CAPABILITIES.standardRedrive,
    admin,
    queues,
  ),
);
