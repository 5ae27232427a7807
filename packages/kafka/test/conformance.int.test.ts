import { runTransportConformance } from '@idemq/conformance';
import { EXPECTED_CAPABILITIES } from './expectedCapabilities.js';
import { kafkaHarness } from './helpers.js';

// The default: partitions consumed in order, retries wait in place and block their partition.
runTransportConformance(
  kafkaHarness('kafka (in order, in-place retry)', {}, EXPECTED_CAPABILITIES.inOrderInPlace),
);
