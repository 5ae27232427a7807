// @ts-check
// @idemq/services: real Redis, RabbitMQ, Kafka, SQS and PostgreSQL on 127.0.0.1 for tests
// and demos.
export { DEFAULT_SERVICES, ensureServices, servicesStatus, stopServices } from './api.mjs';
export { SQS_QUEUES } from './elasticmq.mjs';
export { ServiceError } from './errors.mjs';
export { startPostgresServer } from './postgresServer.mjs';
export { runScript } from './runScript.mjs';
export { freePort, TcpProxy, trackedSockets } from './tcpProxy.mjs';
export { SERVICE_NAMES, serviceUrls } from './urls.mjs';
