import { runTransportConformance } from '@idemq/conformance';
import { kafkaHarness } from './helpers.js';

// The default: partitions consumed in order, retries wait in place and block their partition.
runTransportConformance(kafkaHarness('kafka (in order, in-place retry)', {}));
