import {
  Metadata,
  type MethodDefinition,
  ServerInterceptingCall,
  type ServerInterceptingCallInterface,
  type ServerInterceptor,
  status,
} from '@grpc/grpc-js';
import type { Redis } from 'ioredis';

const IN_PROGRESS = 'IN_PROGRESS';
const IN_PROGRESS_BYTES = Buffer.from(IN_PROGRESS);
const LEASE_MS = 40_000;
const TTL_MS = 86_400_000;

/**
 * The server interceptor a user writes by hand for one unary method: read the `idempotency-key`
 * metadata; `SET key IN_PROGRESS NX PX 40000`; if taken, `GET` it and replay the stored response
 * (`idempotent-replayed: true`), or answer ABORTED while the first call runs; if claimed, let the
 * handler run and `SET key <response bytes> PX 86400000` before its status goes out (a failed
 * run's claim is deleted). Two round trips per new call, two per replay. Correct on the happy
 * path; no fingerprint, no fencing, no lease renewal.
 */
export function handInterceptor(
  client: Redis,
  prefix: string,
  method: MethodDefinition<unknown, unknown>,
): ServerInterceptor {
  return (descriptor, call) => {
    if (descriptor.path !== method.path) return new ServerInterceptingCall(call);
    let key: string | undefined;
    let response: Buffer | undefined;
    return new ServerInterceptingCall(call, {
      start(next) {
        next({
          onReceiveMetadata(metadata, pass) {
            const [value] = metadata.get('idempotency-key');
            if (typeof value === 'string' && value.length > 0) key = prefix + value;
            pass(metadata);
          },
          onReceiveMessage(message, pass) {
            if (key === undefined) {
              call.sendStatus(statusOf(status.INVALID_ARGUMENT, 'idempotency-key is required'));
              return;
            }
            claim(client, key).then(
              (claimed) => {
                if (claimed === true) pass(message);
                else if (claimed === false)
                  call.sendStatus(statusOf(status.ABORTED, 'in progress'));
                else replay(call, method, claimed);
              },
              (error: unknown) => call.sendStatus(statusOf(status.UNAVAILABLE, String(error))),
            );
          },
        });
      },
      sendMessage(message, next) {
        if (key !== undefined) response = method.responseSerialize(message);
        next(message);
      },
      sendStatus(sent, next) {
        if (key === undefined) return next(sent);
        const write =
          sent.code === status.OK && response !== undefined
            ? client.set(key, response, 'PX', TTL_MS)
            : client.del(key);
        write.then(
          () => next(sent),
          (error: unknown) => next(statusOf(status.UNAVAILABLE, String(error))),
        );
      },
    });
  };
}

/** `true`: claimed; `false`: another call holds it; bytes: the stored response. */
async function claim(client: Redis, key: string): Promise<boolean | Buffer> {
  if ((await client.set(key, IN_PROGRESS, 'PX', LEASE_MS, 'NX')) === 'OK') return true;
  const stored = await client.getBuffer(key);
  return stored === null || stored.equals(IN_PROGRESS_BYTES) ? false : stored;
}

function replay(
  call: ServerInterceptingCallInterface,
  method: MethodDefinition<unknown, unknown>,
  stored: Buffer,
): void {
  const metadata = new Metadata();
  metadata.set('idempotent-replayed', 'true');
  call.sendMetadata(metadata);
  call.sendMessage(method.responseDeserialize(stored), () =>
    call.sendStatus(statusOf(status.OK, 'OK')),
  );
}

function statusOf(code: status, details: string) {
  return { code, details, metadata: new Metadata() };
}
