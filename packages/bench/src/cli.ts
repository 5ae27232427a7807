#!/usr/bin/env node
/*
 * pnpm bench [--ids 20000] [--runs 5] [--concurrency 1,64] [--only idemq,baseline]
 *            [--stores redis,postgres] [--quick] [--json file] [--doc docs/performance.md]
 *            [--no-ceiling] [--inline]
 * pnpm bench transports [rabbitmq|kafka|sqs …] [--messages 20000] [--runs 3] [--concurrency 64] [--quick] …
 *   (idemq's consumer beside a raw consumer on each transport: transports/cli.ts)
 * pnpm bench http [--runs 3] [--duration 5] [--connections 64] [--only idemq,hand] [--json file]
 *   (a no-op POST route bare and behind idempotency layers: http/cli.ts)
 * pnpm bench grpc [--runs 3] [--duration 5] [--concurrency 64] [--only idemq,hand] [--json file]
 *   (a trivial unary method bare and behind idempotency interceptors: grpc/cli.ts)
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { parseCli, USAGE } from './args.js';
import { type BenchReport, runBench } from './bench.js';
import { killChildren } from './children.js';
import { GRPC_COMMAND } from './grpc/types.js';
import { HTTP_COMMAND } from './http/types.js';
import { spliceDocument, toMarkdown, toText } from './report.js';
import { benchNamespace, removeRunDataAt } from './runData.js';
import { TRANSPORTS_COMMAND } from './transports/types.js';

async function main(): Promise<void> {
  const argv = process.argv.slice(2).filter((arg) => arg !== '--');
  if (argv[0] === HTTP_COMMAND) {
    const { httpMain } = await import('./http/cli.js');
    return httpMain(argv.slice(1));
  }
  if (argv[0] === GRPC_COMMAND) {
    const { grpcMain } = await import('./grpc/cli.js');
    return grpcMain(argv.slice(1));
  }
  if (argv[0] === TRANSPORTS_COMMAND) {
    // Loaded on demand: the store bench needs no broker client.
    const { transportsMain } = await import('./transports/cli.js');
    return transportsMain(argv.slice(1));
  }
  const options = parseCli(argv);
  if (options === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const { json, doc, fromJson, ...benchOptions } = options;
  if (fromJson) {
    const saved = JSON.parse(await readFile(fromJson, 'utf8')) as BenchReport & { command: string };
    process.stdout.write(`${toText(saved, saved.command)}\n`);
    if (doc) await fillDocument(doc, toMarkdown(saved, saved.command));
    return;
  }
  const command = ['pnpm bench', ...argv].join(' ');
  const namespace = benchNamespace();
  // Interrupted: delete this run's keys and tables before leaving (its children exit with it).
  const interrupt = async (signal: NodeJS.Signals) => {
    process.stderr.write(`[bench] ${signal}: deleting ${namespace} keys and tables\n`);
    killChildren();
    await removeRunDataAt(options, namespace);
    process.exit(130);
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  const report = await runBench({
    ...benchOptions,
    namespace,
    log: (line) => process.stderr.write(`[bench] ${line}\n`),
  });
  process.stdout.write(`\n${toText(report, command)}\n`);
  if (json) {
    await mkdir(dirname(json), { recursive: true });
    await writeFile(json, `${JSON.stringify({ command, ...report }, null, 2)}\n`);
    process.stderr.write(`[bench] wrote ${json}\n`);
  }
  if (doc) await fillDocument(doc, toMarkdown(report, command));
}

async function fillDocument(file: string, blocks: ReturnType<typeof toMarkdown>): Promise<void> {
  await writeFile(file, spliceDocument(await readFile(file, 'utf8'), blocks));
  process.stderr.write(`[bench] updated ${file}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
