import { createKafkajs, KafkaHeaders, type KafkaTransport, kafka } from '@idemq/kafka';
import { noop, RawRound, startRound } from '../consumerKit.js';
import { handleRaw, type RawGuard } from '../handRolled.js';
import type { ConsumerSession } from '../idemqConsumer.js';
import type { ConsumeRequest, ConsumeResult, ConsumerEnd, ConsumerInit } from '../types.js';

/** The Kafka consumer group that reads `topic`: fresh with every round's topic, for both consumers. */
export function groupOf(topic: string): string {
  return `${topic}-group`;
}

/**
 * idemq's transport: `kafka({ brokers, partitionConcurrency: concurrency })`, so that up to
 * `concurrency` messages of one partition are in flight (its default, 1, keeps Kafka's
 * per-partition order at the price of one message per partition at a time).
 */
export function idemqTransport(init: ConsumerInit): KafkaTransport {
  return kafka({
    brokers: init.endpoints.kafkaBrokers,
    clientId: 'idemq-bench',
    groupId: (_group, source) => groupOf(source),
    partitionConcurrency: init.concurrency,
  });
}

type KafkajsClient = ReturnType<typeof createKafkajs>;

function headerText(value: Buffer | string | (Buffer | string)[] | undefined): string {
  const last = Array.isArray(value) ? value[value.length - 1] : value;
  if (last === undefined) return '';
  return typeof last === 'string' ? last : last.toString('utf8');
}

/**
 * kafkajs as one would write it by hand: `eachBatch` with auto-resolve and auto-commit,
 * `partitionsConsumedConcurrently` = the topic's partitions, each message's no-op handler
 * awaited, then its offset resolved. No decoding, and no idempotency unless `guard` wraps the
 * handler; then up to `concurrency` messages of a batch are guarded at once (two Redis round
 * trips per message, one after the other, would otherwise bound a partition), and their
 * offsets resolved in order.
 */
export class RawKafkaConsumer implements ConsumerSession {
  private constructor(
    private readonly init: ConsumerInit,
    private readonly client: KafkajsClient,
    private readonly guard: RawGuard | undefined,
  ) {}

  static async open(init: ConsumerInit, guard?: RawGuard): Promise<RawKafkaConsumer> {
    return new RawKafkaConsumer(
      init,
      createKafkajs({
        brokers: init.endpoints.kafkaBrokers,
        clientId: `idemq-bench ${init.consumer}`,
      }),
      guard,
    );
  }

  async round(request: ConsumeRequest): Promise<ConsumeResult> {
    const round = new RawRound(request, `${this.init.consumer} consumer`);
    const { guard } = this;
    const chunk = this.init.concurrency;
    // The transport's default fetch wait, so both wait alike on an empty partition.
    const consumer = this.client.consumer({
      groupId: groupOf(request.source),
      maxWaitTimeInMs: 1_000,
      allowAutoTopicCreation: false,
    });
    await guard?.startRound();
    const start = startRound();
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [request.source], fromBeginning: true });
      await consumer.run({
        autoCommit: true,
        eachBatchAutoResolve: true,
        partitionsConsumedConcurrently: this.init.settings.partitions,
        eachBatch: async ({
          batch,
          resolveOffset,
          heartbeat,
          commitOffsetsIfNecessary,
          isStale,
        }) => {
          if (guard) {
            for (let at = 0; at < batch.messages.length && !isStale(); at += chunk) {
              const messages = batch.messages.slice(at, at + chunk);
              await Promise.all(
                messages.map((message) =>
                  handleRaw(
                    round.tally,
                    headerText(message.headers?.[KafkaHeaders.requestId]),
                    message.value,
                    guard,
                  ),
                ),
              );
              for (const message of messages) {
                resolveOffset(message.offset);
                round.ack();
              }
            }
          } else {
            for (const message of batch.messages) {
              if (isStale()) break;
              round.tally.add(headerText(message.headers?.[KafkaHeaders.requestId]));
              await noop(message.value);
              resolveOffset(message.offset);
              round.ack();
            }
          }
          await commitOffsetsIfNecessary();
          await heartbeat();
        },
      });
      start.startedAt = performance.now();
      await round.completion.done;
      await guard?.settled();
    } finally {
      round.completion.fail(new Error('round ended'));
      // Commits the resolved offsets on the way out.
      await consumer.disconnect();
    }
    return { ...round.result(start), ...(await guard?.endRound()) };
  }

  async close(): Promise<ConsumerEnd> {
    await this.guard?.close();
    return { maxRssBytes: process.resourceUsage().maxRSS * 1024 };
  }
}
