import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { freePort, type PostgresServer, serviceUrls, startPostgresServer } from '@idemq/services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresProbeError, postgresQuery, probePostgres } from '../src/probes/postgres.mjs';

describe('PostgreSQL', () => {
  const url = serviceUrls().postgres;
  const schema = `idemq_smoke_${randomUUID().replaceAll('-', '')}`;

  afterAll(() => postgresQuery(url, `DROP SCHEMA IF EXISTS ${schema} CASCADE`));

  it('answers SELECT 1 through the wire-protocol probe', async () => {
    const result = await probePostgres(url);
    expect(result.rows).toEqual([['1']]);
    expect(result.serverVersion).toMatch(/^\d+\.\d+/);
  });

  it('creates a table, writes a row once under a unique key and reads it back', async () => {
    const table = `${schema}.records`;
    await postgresQuery(
      url,
      `CREATE SCHEMA ${schema}; CREATE TABLE ${table} (key text PRIMARY KEY, value jsonb NOT NULL)`,
    );
    const insert = `INSERT INTO ${table} VALUES ('k', '{"n": 1, "text": "é"}') ON CONFLICT DO NOTHING RETURNING key`;
    expect((await postgresQuery(url, insert)).rows).toEqual([['k']]);
    expect((await postgresQuery(url, insert)).rows).toEqual([]);
    const { rows } = await postgresQuery(url, `SELECT value->>'text', value->'n' FROM ${table}`);
    expect(rows).toEqual([['é', '1']]);
  });

  it('tells a server that does not speak PostgreSQL apart', async () => {
    const http = createServer((socket) => {
      socket.resume(); // read what the probe sends, so that the socket can close
      socket.end('HTTP/1.1 400 Bad Request\r\n\r\n');
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const address = http.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      await expect(probePostgres(`postgres://postgres@127.0.0.1:${port}/postgres`)).rejects.toThrow(
        'did not answer like PostgreSQL',
      );
    } finally {
      await new Promise((resolve) => http.close(resolve));
    }
  });
});

describe('startPostgresServer', () => {
  let server: PostgresServer;

  beforeAll(async () => {
    server = await startPostgresServer({ port: await freePort() });
  });
  afterAll(() => server.stop());

  it('keeps a committed row across a SIGKILL and a restart', async () => {
    expect(server.url).toBe(`postgres://postgres@127.0.0.1:${server.port}/postgres`);
    await postgresQuery(server.url, "CREATE TABLE t (v text); INSERT INTO t VALUES ('committed')");
    const crashed = server.pid;
    expect(crashed).toBeTypeOf('number');

    await server.kill('SIGKILL');
    expect(server.pid).toBeUndefined();
    await expect(probePostgres(server.url)).rejects.toThrow('ECONNREFUSED');

    await server.restart();
    expect(server.pid).not.toBe(crashed);
    expect((await postgresQuery(server.url, 'SELECT v FROM t')).rows).toEqual([['committed']]);
    expect(readFileSync(server.logFile, 'utf8')).toContain('automatic recovery in progress');
  });

  it('authenticates with SCRAM-SHA-256, MD5 and cleartext, and says when a password is missing', async () => {
    const at = (user: string, password?: string) =>
      `postgres://${user}${password ? `:${encodeURIComponent(password)}` : ''}@127.0.0.1:${server.port}/postgres`;
    await postgresQuery(
      server.url,
      `ALTER ROLE postgres PASSWORD 'scram secret';
       SET password_encryption = 'md5'; CREATE ROLE md5user LOGIN PASSWORD 'md5 secret';
       CREATE ROLE plainuser LOGIN PASSWORD 'plain secret'`,
    );
    writeFileSync(
      join(server.dataDir, 'pg_hba.conf'),
      [
        'host all postgres 127.0.0.1/32 scram-sha-256',
        'host all md5user 127.0.0.1/32 md5',
        'host all plainuser 127.0.0.1/32 password',
        '',
      ].join('\n'),
    );
    await postgresQuery(server.url, 'SELECT pg_reload_conf()');
    // The postmaster rereads pg_hba.conf on its own time: wait until trust is gone.
    await expect
      .poll(
        () =>
          probePostgres(at('postgres')).then(
            () => null,
            (error: unknown) => error,
          ),
        {
          timeout: 5_000,
          interval: 50,
        },
      )
      .toBeInstanceOf(PostgresProbeError);
    const missing = await probePostgres(at('postgres')).catch((error: unknown) => error);
    expect(missing).toMatchObject({ retriable: false });
    expect(String(missing)).toContain('asks user "postgres" for a password (SCRAM-SHA-256)');

    expect((await probePostgres(at('postgres', 'scram secret'))).auth).toBe('scram-sha-256');
    expect((await probePostgres(at('md5user', 'md5 secret'))).auth).toBe('md5');
    expect((await probePostgres(at('plainuser', 'plain secret'))).auth).toBe('cleartext');
    for (const user of ['postgres', 'md5user', 'plainuser']) {
      await expect(probePostgres(at(user, 'wrong'))).rejects.toMatchObject({
        code: '28P01',
        retriable: false,
      });
    }
  });

  it('stop shuts it down and removes the data dir it created', async () => {
    await server.stop();
    expect(server.pid).toBeUndefined();
    expect(existsSync(server.dataDir)).toBe(false);
    await expect(probePostgres(server.url)).rejects.toThrow('ECONNREFUSED');
  });
});
