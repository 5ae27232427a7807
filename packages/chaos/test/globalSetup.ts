import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { ensureServices } from '@idemq/services';

// The consumers are child processes running dist/: build it from the current sources first.
// Then every broker of the suite (and Redis for the ledger), started when missing, never skipped.
export default async function setup(): Promise<void> {
  process.env.AWS_EC2_METADATA_DISABLED = 'true';
  const packageDir = fileURLToPath(new URL('..', import.meta.url));
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
    cwd: packageDir,
    stdio: 'inherit',
  });
  await ensureServices(['redis', 'rabbitmq', 'kafka', 'sqs']);
}
