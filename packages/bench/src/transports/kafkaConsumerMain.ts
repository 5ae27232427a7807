/**
 * Runs the Kafka consumer benchmark on its own until it is wired into `pnpm bench`:
 * `node dist/transports/kafkaConsumerMain.js [--messages=20000] [--partitions=6]
 * [--concurrency=64] [--partition-concurrency=<concurrency>] [--runs=3] [--json]`. Kafka and Redis are started when missing.
 */
import { ensureServices } from '@idemq/services';
import {
  formatKafkaConsumerTable,
  KAFKA_CONSUMER_BENCH_DEFAULTS,
  runKafkaConsumerBench,
} from './kafkaConsumer.js';

function flag(name: string, fallback: number): number {
  const given = process.argv.find((arg) => arg.startsWith(`--${name}=`));
  if (given === undefined) return fallback;
  const value = Number(given.slice(name.length + 3));
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be an integer ≥ 1`);
  return value;
}

const urls = await ensureServices(['kafka', 'redis']);
const result = await runKafkaConsumerBench({
  messages: flag('messages', KAFKA_CONSUMER_BENCH_DEFAULTS.messages),
  partitions: flag('partitions', KAFKA_CONSUMER_BENCH_DEFAULTS.partitions),
  concurrency: flag('concurrency', KAFKA_CONSUMER_BENCH_DEFAULTS.concurrency),
  runs: flag('runs', KAFKA_CONSUMER_BENCH_DEFAULTS.runs),
  partitionConcurrency: flag(
    'partition-concurrency',
    flag('concurrency', KAFKA_CONSUMER_BENCH_DEFAULTS.concurrency),
  ),
  brokers: urls.kafkaBrokers,
  redisUrl: urls.redis,
});
if (process.argv.includes('--json')) console.log(JSON.stringify(result, null, 2));
for (const round of result.rounds) {
  console.log(
    `run ${round.run} ${round.contender.padEnd(5)} ${Math.round(round.messagesPerSecond)} msg/s ` +
      `(${Math.round(round.messagesPerSecondAfterJoin)} after a ${Math.round(round.joinMs)} ms join), ` +
      `${Math.round(round.ms)} ms, runs ${round.handlerRuns}, distinct ${round.distinctIds}` +
      (round.storeRoundTrips === undefined
        ? ''
        : `, round trips ${round.storeRoundTrips}, events ${JSON.stringify(round.events)}`),
  );
}
console.log(formatKafkaConsumerTable(result));
console.log(`exactly once: ${result.exactlyOnce}`);
