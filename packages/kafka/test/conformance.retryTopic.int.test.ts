import { runTransportConformance } from '@idemq/conformance';
import { kafkaHarness } from './helpers.js';

// Retries through `<source>.retry`: the source partition never blocks.
runTransportConformance(kafkaHarness('kafka (in order, retry topic)', { retryMode: 'topic' }));
