// @ts-check
// PostgreSQL readiness over the raw wire protocol (v3): a StartupMessage for the URL's user and
// database, the authentication the server asks for (none/trust, cleartext, MD5 or SCRAM-SHA-256
// with the URL's password), then a simple Query. No client library needed, so `up` works before
// `pnpm install`. No TLS: the probe talks plain TCP, as a local test server expects.
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import net from 'node:net';
import { userInfo } from 'node:os';

const PROTOCOL_VERSION_3 = 196_608;
/** No message the probe waits for comes anywhere near this; a larger length is not PostgreSQL. */
const MAX_MESSAGE_BYTES = 1024 * 1024;
/** The only startup answers of a PostgreSQL server: Authentication, ErrorResponse, NoticeResponse. */
const FIRST_MESSAGE_TYPES = new Set(['R', 'E', 'N']);

/**
 * A failed probe. `retriable: false` means that waiting will not help (a password is missing or
 * wrong), so readiness stops at once instead of waiting out its budget.
 */
export class PostgresProbeError extends Error {
  /**
   * @param {string} message
   * @param {{ retriable?: boolean, code?: string }} [extra] code: the server's SQLSTATE
   */
  constructor(message, extra = {}) {
    super(message);
    this.name = 'PostgresProbeError';
    this.retriable = extra.retriable ?? true;
    this.code = extra.code;
  }
}

/**
 * @typedef {object} PostgresTarget
 * @property {string} host
 * @property {number} port
 * @property {string} user
 * @property {string} database
 * @property {string | undefined} password
 */

/**
 * The connection settings of a postgres:// (or postgresql://) URL, with libpq's defaults: user
 * $PGUSER or the OS user, database = user, port 5432.
 * @param {string} url
 * @returns {PostgresTarget}
 */
export function parsePostgresUrl(url) {
  const parsed = new URL(url);
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new Error(`not a postgres:// URL: ${parsed.protocol}//...`);
  }
  const user =
    decodeURIComponent(parsed.username) || process.env.PGUSER?.trim() || userInfo().username;
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, '')) || user;
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1',
    port: Number(parsed.port || 5432),
    user,
    database,
    password: parsed.password ? decodeURIComponent(parsed.password) : undefined,
  };
}

/**
 * A frontend message: type byte, int32 length (itself included), body.
 * @param {string} type
 * @param {Buffer} body
 */
function message(type, body) {
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

/** @param {string} text */
const cstring = (text) => Buffer.from(`${text}\0`, 'utf8');

/** @param {PostgresTarget} target */
function startupMessage(target) {
  const params = Buffer.concat([
    cstring('user'),
    cstring(target.user),
    cstring('database'),
    cstring(target.database),
    cstring('application_name'),
    cstring('idemq-services'),
    Buffer.from([0]),
  ]);
  const header = Buffer.alloc(8);
  header.writeInt32BE(params.length + 8, 0);
  header.writeInt32BE(PROTOCOL_VERSION_3, 4);
  return Buffer.concat([header, params]);
}

/**
 * Null-terminated strings of a message body.
 * @param {Buffer} body
 */
function cstrings(body) {
  return body.toString('utf8').split('\0');
}

/**
 * ErrorResponse fields (S severity, C SQLSTATE, M message) as an error. Authentication failures
 * (SQLSTATE class 28) are final; everything else (e.g. 57P03 "the database system is starting
 * up") may pass.
 * @param {Buffer} body
 */
function serverError(body) {
  /** @type {Record<string, string>} */
  const fields = {};
  let offset = 0;
  while (offset < body.length && body[offset] !== 0) {
    const end = body.indexOf(0, offset + 1);
    if (end === -1) break;
    fields[String.fromCharCode(body[offset] ?? 0)] = body.toString('utf8', offset + 1, end);
    offset = end + 1;
  }
  const code = fields.C ?? '?';
  return new PostgresProbeError(`PostgreSQL answered ${code}: ${fields.M ?? '(no message)'}`, {
    retriable: !code.startsWith('28'),
    code,
  });
}

/** @param {Buffer} data */
const sha256 = (data) => createHash('sha256').update(data).digest();
/** @param {Buffer} key @param {string} text */
const hmac = (key, text) => createHmac('sha256', key).update(text).digest();

/**
 * One SCRAM-SHA-256 exchange (RFC 5802/7677 without channel binding, as PostgreSQL does it over
 * plain TCP). PostgreSQL ignores the SCRAM user name (it has the startup one), so it is empty.
 * SASLprep is approximated by NFKC normalisation, which is exact for ASCII passwords.
 * @param {string} password
 */
function scramClient(password) {
  const clientNonce = randomBytes(18).toString('base64');
  const clientFirstBare = `n=,r=${clientNonce}`;
  /** @type {{ authMessage: string, saltedPassword: Buffer } | undefined} */
  let state;
  return {
    first: `n,,${clientFirstBare}`,
    /** @param {string} serverFirst  r=<nonce>,s=<salt>,i=<iterations> */
    final(serverFirst) {
      const attrs = new Map(
        serverFirst.split(',').map((part) => [part.slice(0, 1), part.slice(2)]),
      );
      const nonce = attrs.get('r') ?? '';
      const salt = Buffer.from(attrs.get('s') ?? '', 'base64');
      const iterations = Number(attrs.get('i'));
      if (!nonce.startsWith(clientNonce) || salt.length === 0 || !(iterations > 0)) {
        throw new PostgresProbeError(`malformed SCRAM server-first message: ${serverFirst}`, {
          retriable: false,
        });
      }
      const saltedPassword = pbkdf2Sync(password.normalize('NFKC'), salt, iterations, 32, 'sha256');
      const withoutProof = `c=biws,r=${nonce}`;
      const authMessage = `${clientFirstBare},${serverFirst},${withoutProof}`;
      const clientKey = hmac(saltedPassword, 'Client Key');
      const signature = hmac(sha256(clientKey), authMessage);
      const proof = Buffer.from(clientKey.map((byte, index) => byte ^ (signature[index] ?? 0)));
      state = { authMessage, saltedPassword };
      return `${withoutProof},p=${proof.toString('base64')}`;
    },
    /** @param {string} serverFinal  v=<server signature> */
    verify(serverFinal) {
      if (!state) return false;
      const expected = hmac(hmac(state.saltedPassword, 'Server Key'), state.authMessage);
      return serverFinal === `v=${expected.toString('base64')}`;
    },
  };
}

/**
 * @typedef {object} PostgresQueryResult
 * @property {(string | null)[][]} rows  every DataRow of every statement, in text format
 * @property {string | undefined} serverVersion  the server_version parameter, e.g. "15.14 (Debian ...)"
 * @property {'trust' | 'cleartext' | 'md5' | 'scram-sha-256'} auth  what the server asked for
 */

/**
 * Connects, authenticates and runs `sql` with the simple Query protocol (several statements
 * allowed), then disconnects. Rejects with the server's error, or with a PostgresProbeError whose
 * `retriable` is false when a password is missing or wrong.
 * @param {string} url
 * @param {string} sql
 * @param {number} [timeoutMs]
 * @returns {Promise<PostgresQueryResult>}
 */
export function postgresQuery(url, sql, timeoutMs = 3000) {
  const target = parsePostgresUrl(url);
  const where = `${target.host}:${target.port}`;
  return new Promise((resolve, reject) => {
    /** @type {(string | null)[][]} */
    const rows = [];
    /** @type {PostgresQueryResult['auth']} */
    let auth = 'trust';
    /** @type {string | undefined} */
    let serverVersion;
    /** @type {ReturnType<typeof scramClient> | undefined} */
    let scram;
    let received = Buffer.alloc(0);
    let first = true;
    let queried = false;
    let settled = false;

    const socket = net.connect({ host: target.host, port: target.port });
    /** @param {Error | null} error */
    const finish = (error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) socket.destroy();
      else socket.end(message('X', Buffer.alloc(0)));
      if (error) reject(error);
      else resolve({ rows, serverVersion, auth });
    };
    const timer = setTimeout(
      () => finish(new PostgresProbeError(`no answer from ${where} in ${timeoutMs} ms`)),
      timeoutMs,
    );
    /** @param {string} how */
    const needPassword = (how) => {
      if (target.password !== undefined) return target.password;
      throw new PostgresProbeError(
        `${where} asks user "${target.user}" for a password (${how}): put it in POSTGRES_URL`,
        { retriable: false },
      );
    };

    /** @param {number} code @param {Buffer} body */
    const authenticate = (code, body) => {
      switch (code) {
        case 0: // AuthenticationOk
          return;
        case 3: // AuthenticationCleartextPassword
          auth = 'cleartext';
          socket.write(message('p', cstring(needPassword('cleartext'))));
          return;
        case 5: {
          // AuthenticationMD5Password: "md5" + md5(md5(password + user) + salt)
          auth = 'md5';
          const inner = createHash('md5')
            .update(`${needPassword('md5')}${target.user}`)
            .digest('hex');
          const outer = createHash('md5')
            .update(Buffer.concat([Buffer.from(inner), body.subarray(4, 8)]))
            .digest('hex');
          socket.write(message('p', cstring(`md5${outer}`)));
          return;
        }
        case 10: {
          // AuthenticationSASL: the mechanisms offered
          auth = 'scram-sha-256';
          const mechanisms = cstrings(body.subarray(4)).filter(Boolean);
          const password = needPassword(mechanisms.join(', '));
          if (!mechanisms.includes('SCRAM-SHA-256')) {
            throw new PostgresProbeError(
              `${where} offers only ${mechanisms.join(', ')}, which the probe does not speak`,
              { retriable: false },
            );
          }
          scram = scramClient(password);
          const initial = Buffer.from(scram.first);
          const length = Buffer.alloc(4);
          length.writeInt32BE(initial.length, 0);
          socket.write(message('p', Buffer.concat([cstring('SCRAM-SHA-256'), length, initial])));
          return;
        }
        case 11: // AuthenticationSASLContinue
          if (!scram) throw new PostgresProbeError('SASLContinue without a SASL start');
          socket.write(message('p', Buffer.from(scram.final(body.toString('utf8', 4)))));
          return;
        case 12: // AuthenticationSASLFinal
          if (!scram?.verify(body.toString('utf8', 4))) {
            throw new PostgresProbeError(`${where} sent a wrong SCRAM server signature`, {
              retriable: false,
            });
          }
          return;
        default:
          throw new PostgresProbeError(
            `${where} asks for an authentication the probe does not speak (code ${code})`,
            { retriable: false },
          );
      }
    };

    /** @param {string} type @param {Buffer} body */
    const handle = (type, body) => {
      if (first && !FIRST_MESSAGE_TYPES.has(type)) {
        throw new PostgresProbeError(`${where} did not answer like PostgreSQL`);
      }
      first = false;
      switch (type) {
        case 'R':
          authenticate(body.readInt32BE(0), body);
          return;
        case 'E':
          throw serverError(body);
        case 'S': {
          const [name, value] = cstrings(body);
          if (name === 'server_version') serverVersion = value;
          return;
        }
        case 'D': {
          /** @type {(string | null)[]} */
          const row = [];
          let offset = 2;
          for (let column = body.readInt16BE(0); column > 0; column -= 1) {
            const length = body.readInt32BE(offset);
            offset += 4;
            row.push(length < 0 ? null : body.toString('utf8', offset, offset + length));
            offset += Math.max(length, 0);
          }
          rows.push(row);
          return;
        }
        case 'Z': // ReadyForQuery: after the startup, then after the query
          if (queried) {
            finish(null);
            return;
          }
          queried = true;
          socket.write(message('Q', cstring(sql)));
          return;
        default: // BackendKeyData, NoticeResponse, RowDescription, CommandComplete, ...
          return;
      }
    };

    socket.once('connect', () => socket.write(startupMessage(target)));
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk]);
      try {
        while (!settled && received.length >= 5) {
          const type = String.fromCharCode(received[0] ?? 0);
          const length = received.readInt32BE(1);
          if (length < 4 || length > MAX_MESSAGE_BYTES) {
            throw new PostgresProbeError(`${where} did not answer like PostgreSQL`);
          }
          if (received.length < 1 + length) break;
          const body = received.subarray(5, 1 + length);
          received = received.subarray(1 + length);
          handle(type, body);
        }
      } catch (error) {
        finish(error instanceof Error ? error : new Error(String(error)));
      }
    });
    socket.on('error', (error) => finish(error));
    socket.on('close', () =>
      finish(new PostgresProbeError(`${where} closed the connection before answering`)),
    );
  });
}

/**
 * Throws unless the server lets the URL's user in and answers `SELECT 1` with 1.
 * @param {string} url
 * @param {number} [timeoutMs]
 * @returns {Promise<PostgresQueryResult>}
 */
export async function probePostgres(url, timeoutMs) {
  const result = await postgresQuery(url, 'SELECT 1', timeoutMs);
  const value = result.rows[0]?.[0];
  if (result.rows.length !== 1 || value !== '1') {
    throw new PostgresProbeError(`SELECT 1 answered ${JSON.stringify(result.rows)}`);
  }
  return result;
}
