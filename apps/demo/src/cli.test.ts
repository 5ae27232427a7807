import { describe, expect, it } from 'vitest';
import { ExitCodes, main, parseCli } from './cli.js';

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: {
      stdout: { write: (chunk: string) => out.push(chunk), isTTY: false },
      stderr: { write: (chunk: string) => err.push(chunk) },
    },
    stdout: () => out.join(''),
    stderr: () => err.join(''),
  };
}

describe('cli', () => {
  it.each([
    [['--messages', '0'], /--messages must be a whole number/],
    [['--messages', 'many'], /--messages must be a whole number/],
    [['--duplicates', '1.5'], /--duplicates must be a fraction/],
    [['--consumers', '0'], /--consumers must be a whole number/],
    [['--timeout-ms', '-5'], /--timeout-ms/],
    [['--store', 'mongo'], /unknown --store 'mongo'/],
    [['--transport', 'carrier-pigeon'], /unknown --transport 'carrier-pigeon'/],
    [['--frobnicate'], /Unknown option '--frobnicate'/],
    [['positional'], /Unexpected argument 'positional'/],
  ])('rejects %j with exit code 2', async (argv, message) => {
    const run = capture();
    expect(await main(argv, run.io)).toBe(ExitCodes.usage);
    expect(run.stderr()).toMatch(message);
    expect(run.stdout()).toBe('');
  });

  it('prints help and exits 0', async () => {
    const run = capture();
    expect(await main(['--help'], run.io)).toBe(ExitCodes.ok);
    expect(run.stdout()).toMatch(/--messages <n>/);
    expect(run.stdout()).toMatch(/--transport <name>/);
  });

  it('parses defaults, percentages and the separator pnpm passes through', () => {
    const command = parseCli(['--', '--duplicates', '10%', '--seed', '7']);
    expect(command).toMatchObject({
      kind: 'run',
      json: false,
      scenario: { messages: 2000, duplicates: 0.1, consumers: 4, seed: 7, transport: 'memory' },
    });
  });

  it('runs a small demo, prints JSON and exits 0', async () => {
    const run = capture();
    const code = await main(
      ['--messages', '120', '--consumers', '3', '--seed', '11', '--json'],
      run.io,
    );
    const figures = JSON.parse(run.stdout()) as Record<string, unknown>;
    expect(code).toBe(ExitCodes.ok);
    expect(figures).toMatchObject({ ok: true, processedTwice: 0, lost: 0, uniqueIds: 120 });
    // Progress went to stderr, so stdout is nothing but the document.
    expect(run.stderr()).toMatch(/progress /);
  });

  it('runs the HTTP payments API with retrying clients and exits 0', async () => {
    const run = capture();
    const code = await main(
      ['--transport', 'http', '--messages', '40', '--consumers', '4', '--seed', '3', '--json'],
      run.io,
    );
    const figures = JSON.parse(run.stdout()) as Record<string, unknown>;
    expect(code).toBe(ExitCodes.ok);
    expect(figures).toMatchObject({
      ok: true,
      transport: 'http',
      requested: 40,
      chargedTwice: 0,
      lost: 0,
    });
  });

  it.each(['http', 'grpc'])('refuses --duplicates with --transport %s', async (transport) => {
    const run = capture();
    expect(await main(['--transport', transport, '--duplicates', '10%'], run.io)).toBe(
      ExitCodes.usage,
    );
    expect(run.stderr()).toMatch(
      new RegExp(`--duplicates does not apply to --transport ${transport}`),
    );
  });

  it('parses --transport grpc: payments, clients, seed, store, JSON', () => {
    expect(parseCli(['--transport', 'grpc', '--seed', '5'])).toEqual({
      kind: 'grpc',
      json: false,
      scenario: { payments: 500, clients: 16, seed: 5, timeoutMs: 60_000, store: 'memory' },
    });
    expect(
      parseCli([
        '--',
        '--transport',
        'grpc',
        '--messages',
        '40',
        '--consumers',
        '4',
        '--store',
        'redis',
        '--json',
      ]),
    ).toMatchObject({
      kind: 'grpc',
      json: true,
      scenario: { payments: 40, clients: 4, store: 'redis' },
    });
    expect(() => parseCli(['--transport', 'grpc', '--consumers', '257'])).toThrow(
      /--consumers must be a whole number from 1 to 256/,
    );
  });

  it('runs the gRPC payments API with clients whose deadlines expire, prints the summary, exits 0', async () => {
    const run = capture();
    const code = await main(
      ['--transport', 'grpc', '--messages', '40', '--consumers', '4', '--seed', '3'],
      run.io,
    );
    expect(run.stderr()).toBe('');
    expect(code).toBe(ExitCodes.ok);
    const text = run.stdout();
    expect(text).toMatch(/^idemq demo · transport grpc .* · store memory · 4 clients · seed 3$/m);
    expect(text).toMatch(/│ payments requested +│ +40 │/);
    expect(text).toMatch(/│ deadline expiries +│/);
    expect(text).toMatch(/│ ABORTED +│/);
    expect(text).toMatch(/│ charged +│ +40 │ of 40 requested/);
    expect(text).toMatch(/│ charged twice +│ +0 │ must be 0: ok/);
    expect(text).toMatch(/│ lost +│ +0 │ must be 0: ok/);
    expect(text).toMatch(
      /^OK: every payment charged exactly once, every client got its charge\.$/m,
    );
  });

  it.each(['http', 'grpc'])('refuses --store postgres with --transport %s', async (transport) => {
    const run = capture();
    expect(await main(['--transport', transport, '--store', 'postgres'], run.io)).toBe(
      ExitCodes.usage,
    );
    expect(run.stderr()).toMatch(
      new RegExp(`--store postgres runs with the brokers .* with --transport ${transport} choose`),
    );
  });

  it('parses --store postgres for the broker story and lists it in the help', async () => {
    expect(parseCli(['--store', 'postgres', '--transport', 'kafka'])).toMatchObject({
      kind: 'run',
      scenario: { store: 'postgres', transport: 'kafka' },
    });
    const run = capture();
    await main(['--help'], run.io);
    expect(run.stdout()).toMatch(/--store <name> +idempotency store: memory, redis, postgres/);
  });

  it('lists grpc among the transports of an unknown --transport', async () => {
    const run = capture();
    expect(await main(['--transport', 'smoke'], run.io)).toBe(ExitCodes.usage);
    expect(run.stderr()).toMatch(/choose one of: .*http, grpc/);
  });

  it('prints the summary table and exits 1 when payments are lost', async () => {
    const run = capture();
    const code = await main(['--messages', '200', '--seed', '3', '--timeout-ms', '1'], run.io);
    expect(code).toBe(ExitCodes.invariantViolated);
    expect(run.stdout()).toMatch(/│ lost +│ +[1-9][\d,]* │ must be 0: FAILED/);
    expect(run.stdout()).toMatch(/FAILED:/);
  });
});
