import { runTransportConformance } from '@idemq/conformance';
import { EXPECTED_CAPABILITIES } from './expectedCapabilities.js';
import { kafkaHarness } from './helpers.js';

// Retries through `<source>.retry`: the source partition never blocks.
runTransportConformance(
  kafkaHarness(
    'kafka (in order, retry topic)',
    { retryMode: 'topic' },
    EXPECTED_CAPABILITIES.inOrderRetryTopic,
  ),
);
