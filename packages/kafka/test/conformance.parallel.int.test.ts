import { runTransportConformance } from '@idemq/conformance';
import { EXPECTED_CAPABILITIES } from './expectedCapabilities.js';
import { kafkaHarness } from './helpers.js';

// Up to 16 messages of one partition in flight: acks out of order, contiguous-prefix commits.
runTransportConformance(
  kafkaHarness(
    'kafka (partitionConcurrency 16, in-place retry)',
    { partitionConcurrency: 16 },
    EXPECTED_CAPABILITIES.concurrentInPlace,
  ),
);
