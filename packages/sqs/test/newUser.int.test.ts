import { fileURLToPath } from 'node:url';
import { ErrorCodes } from '@idemq/core';
import { freePort, runScript } from '@idemq/services';
import { describe, expect, it } from 'vitest';

const packageDir = fileURLToPath(new URL('..', import.meta.url));

describe('what a new user meets with an endpoint that is not there', () => {
  it('a top-level publish to a closed port exits non-zero with a typed error naming the endpoint', async () => {
    const port = await freePort();
    const outcome = await runScript(
      `import { sqs } from './src/index.ts';
       const transport = sqs({
         clientConfig: {
           endpoint: 'http://127.0.0.1:${port}',
           region: 'us-east-1',
           credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
         },
       });
       await transport.publish('payments', { requestId: 'order-42', body: { amount: 10 } });`,
      {
        cwd: packageDir,
        timeoutMs: 30_000,
        env: { ...process.env, AWS_EC2_METADATA_DISABLED: 'true' },
      },
    );
    expect(outcome.timedOut).toBe(false);
    expect(outcome.code).not.toBe(0);
    expect(outcome.code).not.toBe(13);
    expect(outcome.stderr).toContain(ErrorCodes.TRANSPORT_UNAVAILABLE);
    expect(outcome.stderr).toContain(`127.0.0.1:${port}`);
    expect(outcome.stderr).toContain('ECONNREFUSED');
  });
});
