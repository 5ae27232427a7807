import { createKafkajs, KafkaHeaders } from '@idemq/kafka';
import type { BenchBroker, QueuedMessage, SourceState } from '../broker.js';
import { groupOf } from './consumer.js';

type Admin = ReturnType<ReturnType<typeof createKafkajs>['admin']>;
type Client = ReturnType<typeof createKafkajs>;

/** Records per `producer.send` while filling (filling is not measured). */
const FILL_BATCH = 1_000;

/**
 * The bench's side of Kafka: one fresh topic per round with `partitions` partitions, filled with
 * records as the transport's `publish` stamps them (the requestId header, the JSON content type),
 * spread evenly over the partitions. Both consumers read it in a fresh consumer group
 * (`groupOf(topic)`); what is left is the group's lag. Removing deletes the group, settling the
 * topic and those the transport may have added (`<topic>.dlq`, `<topic>.retry`).
 */
export class KafkaBroker implements BenchBroker {
  private readonly live = new Set<string>();
  /** Removed sources whose topics still exist (see `remove`). */
  private readonly unsettled = new Set<string>();

  private constructor(
    private readonly client: Client,
    private readonly admin: Admin,
    private readonly partitions: number,
    readonly description: string,
  ) {}

  static async open(brokers: string[], partitions: number): Promise<KafkaBroker> {
    const client = createKafkajs({ brokers, clientId: 'idemq-bench admin' });
    const admin = client.admin();
    await admin.connect();
    try {
      const cluster = await admin.describeCluster();
      return new KafkaBroker(
        client,
        admin,
        partitions,
        `Kafka at ${brokers.join(',')} (${cluster.brokers.length} broker(s), ${partitions} partitions per topic)`,
      );
    } catch (error) {
      await admin.disconnect();
      throw error;
    }
  }

  async fill(source: string, messages: readonly QueuedMessage[]): Promise<void> {
    this.live.add(source);
    await this.admin.createTopics({
      topics: [{ topic: source, numPartitions: this.partitions }],
      waitForLeaders: true,
    });
    await this.waitForLeaders(source);
    // A producer per fill, gone before the topic is deleted: a client that still knows a topic
    // refreshes its metadata, and with auto-creation on that creates the topic again.
    const producer = this.client.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    try {
      await this.send(producer, source, messages);
    } finally {
      await producer.disconnect();
    }
    const held = await this.endOffsets(source);
    if (held !== messages.length) {
      throw new Error(`topic ${source} holds ${held} records, ${messages.length} were sent`);
    }
  }

  private async send(
    producer: ReturnType<Client['producer']>,
    source: string,
    messages: readonly QueuedMessage[],
  ): Promise<void> {
    for (let from = 0; from < messages.length; from += FILL_BATCH) {
      await producer.send({
        topic: source,
        acks: -1,
        messages: messages.slice(from, from + FILL_BATCH).map((message, i) => ({
          partition: (from + i) % this.partitions,
          key: null,
          value: message.body,
          headers: {
            [KafkaHeaders.requestId]: message.requestId,
            [KafkaHeaders.contentType]: 'application/json',
          },
        })),
      });
    }
  }

  /** The group's lag on the topic, and the records of `<topic>.dlq` if the transport made one. */
  async inspect(source: string): Promise<SourceState> {
    const ends = await this.admin.fetchTopicOffsets(source);
    const [committed] = await this.admin.fetchOffsets({
      groupId: groupOf(source),
      topics: [source],
    });
    let left = 0;
    for (const end of ends) {
      const at = committed?.partitions.find((p) => p.partition === end.partition)?.offset ?? '-1';
      left += Number(end.offset) - Math.max(0, Number(at));
    }
    const topics = await this.admin.listTopics();
    const deadLetters = topics.includes(`${source}.dlq`)
      ? await this.endOffsets(`${source}.dlq`)
      : 0;
    return { left, deadLetters };
  }

  /**
   * Deletes the round's consumer group; its topics are deleted by `settle()`, once no client
   * uses them: the idemq transport lives on for the next round and still knows the topic,
   * and a new subscription of a client whose known topic was deleted stalls.
   */
  async remove(source: string): Promise<number> {
    const { left } = await this.inspect(source).catch(() => ({ left: 0 }));
    await this.admin.deleteGroups([groupOf(source)]).catch(() => undefined);
    this.live.delete(source);
    this.unsettled.add(source);
    return left;
  }

  /** Deletes the topics of every removed source (and `<topic>.dlq`, `<topic>.retry`). */
  async settle(): Promise<void> {
    const sources = [...this.unsettled];
    const topics = (await this.admin.listTopics()).filter((name) =>
      sources.some((source) => name === source || name.startsWith(`${source}.`)),
    );
    if (topics.length > 0) {
      await this.admin.deleteTopics({ topics, timeout: 30_000 });
      await this.waitUntilGone(topics);
    }
    this.unsettled.clear();
  }

  async existing(sources: readonly string[]): Promise<string[]> {
    const topics = new Set(await this.admin.listTopics());
    return sources.filter((source) => topics.has(source));
  }

  async close(): Promise<void> {
    for (const source of [...this.live]) await this.remove(source).catch(() => 0);
    await this.settle().catch(() => undefined);
    await this.admin.disconnect().catch(() => undefined);
  }

  private async endOffsets(topic: string): Promise<number> {
    const offsets = await this.admin.fetchTopicOffsets(topic);
    return offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
  }

  /** Topic deletion completes in the background: wait until the metadata no longer lists them. */
  private async waitUntilGone(topics: readonly string[]): Promise<void> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const listed = new Set(await this.admin.listTopics());
      if (!topics.some((topic) => listed.has(topic))) return;
      if (Date.now() > deadline) throw new Error(`topics ${topics.join(', ')} still listed`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** `createTopics` may return before every partition has a leader; producing then fails. */
  private async waitForLeaders(topic: string): Promise<void> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const ready = await this.admin
        .fetchTopicMetadata({ topics: [topic] })
        .then(
          ({ topics }) =>
            topics[0]?.partitions.length === this.partitions &&
            topics[0].partitions.every((p) => p.leader >= 0),
        )
        .catch(() => false);
      if (ready) return;
      if (Date.now() > deadline) throw new Error(`topic ${topic} has no partition leaders yet`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
