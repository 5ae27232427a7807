import { ensureServices } from '@idemq/services';
import type { TestProject } from 'vitest/node';
import { BrokerAdmin, withVhost } from './broker.js';

declare module 'vitest' {
  export interface ProvidedContext {
    amqp: {
      /** Where the conformance suite and most tests run. */
      url: string;
      /** A vhost of its own for the connection-kill test (`close_all_connections -p`). */
      faultsUrl: string;
      /** The vhosts, when rabbitmqctl manages the broker here; else undefined. */
      vhosts: { main: string; faults: string } | undefined;
    };
    redisUrl: string;
  }
}

/**
 * Real RabbitMQ and Redis on 127.0.0.1 (or AMQP_URL / REDIS_URL): started when missing, never
 * skipped. On a broker this machine runs, every test run gets fresh vhosts, deleted afterwards
 * with everything in them.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const services = await ensureServices(['rabbitmq', 'redis']);
  const external = services.outcomes.some(
    (o) => o.service === 'rabbitmq' && o.outcome === 'external',
  );
  const admin = external ? undefined : BrokerAdmin.local();
  project.provide('redisUrl', services.redis);
  if (!admin) {
    project.provide('amqp', { url: services.amqp, faultsUrl: services.amqp, vhosts: undefined });
    return async () => {};
  }
  const run = `idemq-test-${Date.now().toString(36)}-${process.pid}`;
  const vhosts = { main: run, faults: `${run}-faults` };
  await Promise.all([admin.addVhost(vhosts.main), admin.addVhost(vhosts.faults)]);
  project.provide('amqp', {
    url: withVhost(services.amqp, vhosts.main),
    faultsUrl: withVhost(services.amqp, vhosts.faults),
    vhosts,
  });
  return async () => {
    await Promise.all([admin.deleteVhost(vhosts.main), admin.deleteVhost(vhosts.faults)]);
  };
}
