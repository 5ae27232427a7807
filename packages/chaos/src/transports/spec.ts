/**
 * How a consumer process opens its own transport connection. A `TransportSpec` is plain JSON, so
 * the parent can hand it to a child process over IPC.
 */
import { type MemoryBroker, memoryTransport, type Transport } from '@idemq/core';
import { kafka, wholeResponseSockets } from '@idemq/kafka';
import { rabbitmq } from '@idemq/rabbitmq';
import { trackedSockets } from '@idemq/services';
import { sqs } from '@idemq/sqs';
import { Kafka, logLevel } from 'kafkajs';

export const TRANSPORT_NAMES = ['memory', 'rabbitmq', 'kafka', 'sqs'] as const;
export type TransportName = (typeof TRANSPORT_NAMES)[number];

export type TransportSpec =
  | { kind: 'memory' }
  | { kind: 'rabbitmq'; url: string }
  | { kind: 'kafka'; brokers: string[] }
  | { kind: 'sqs'; endpoint: string; region: string };

/** Group timings at the broker's minimum session, so a killed member's partitions move in seconds. */
const KAFKA_TIMINGS = Object.freeze({
  sessionTimeoutMs: 6_000,
  heartbeatIntervalMs: 500,
  rebalanceTimeoutMs: 8_000,
  maxWaitTimeMs: 200,
});

/** A connection plus the fault hooks the runner may pull on it. */
export interface OpenedTransport {
  transport: Transport;
  /**
   * Cuts every TCP connection this transport holds, as a broker restart would (Kafka only: the
   * other transports are cut from outside the process).
   */
  cutConnections?: () => number;
}

/** Opens a connection per `spec`; `broker` is the shared in-process broker of `memory`. */
export function openTransport(spec: TransportSpec, broker?: MemoryBroker): OpenedTransport {
  switch (spec.kind) {
    case 'memory':
      if (!broker) throw new Error('the memory transport needs the in-process broker');
      return { transport: memoryTransport({ broker }) };
    case 'rabbitmq':
      return {
        transport: rabbitmq({
          url: spec.url,
          queueType: 'quorum',
          connectionName: 'idemq-chaos',
          reconnect: { initialDelayMs: 100, maxDelayMs: 1_000 },
          // Short tiers: F06's backoff stays in milliseconds.
          retryTiersMs: [50, 100, 250, 500, 1_000, 2_000, 5_000],
        }),
      };
    case 'kafka': {
      // Every socket remembered, so a fault can cut them all at once.
      const sockets = trackedSockets();
      const client = new Kafka({
        brokers: spec.brokers,
        clientId: 'idemq-chaos',
        logLevel: logLevel.NOTHING,
        socketFactory: wholeResponseSockets(sockets.socketFactory),
      });
      return {
        transport: kafka({ kafka: client, partitionConcurrency: 8, ...KAFKA_TIMINGS }),
        cutConnections: () => sockets.cut(),
      };
    }
    case 'sqs':
      return {
        transport: sqs({
          clientConfig: {
            endpoint: spec.endpoint,
            region: spec.region,
            credentials: { accessKeyId: 'chaos', secretAccessKey: 'chaos' },
            maxAttempts: 2,
          },
          waitTimeMs: 1_000,
        }),
      };
  }
}
