import { isIP, connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { ISocketFactory } from 'kafkajs';

/** Size of the length prefix of every Kafka response. */
const SIZE_BYTES = 4;

/** Same as kafkajs's own sockets: notice a dead peer within minutes on an idle connection. */
const KEEP_ALIVE_DELAY_MS = 60_000;

/**
 * Cuts a byte stream of Kafka responses (each a 4-byte big-endian size and that many bytes) at
 * response boundaries: `push` returns the whole responses completed so far, holding back a
 * response still arriving.
 */
export class ResponseFramer {
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** Bytes to hold before another whole response can be complete. */
  private needed = SIZE_BYTES;

  push(chunk: Buffer): Buffer | undefined {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    if (this.buffered < this.needed) return undefined;
    const data = this.chunks.length === 1 ? chunk : Buffer.concat(this.chunks, this.buffered);
    let end = 0;
    let needed: number;
    for (;;) {
      if (data.length - end < SIZE_BYTES) {
        needed = end + SIZE_BYTES;
        break;
      }
      const size = data.readInt32BE(end);
      // Not a Kafka stream: pass everything through and let the client report it.
      if (size < 0) {
        this.reset();
        return data;
      }
      const next = end + SIZE_BYTES + size;
      if (next > data.length) {
        needed = next;
        break;
      }
      end = next;
    }
    const rest = data.subarray(end);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.buffered = rest.length;
    this.needed = needed - end;
    return end > 0 ? data.subarray(0, end) : undefined;
  }

  private reset(): void {
    this.chunks = [];
    this.buffered = 0;
    this.needed = SIZE_BYTES;
  }
}

/** kafkajs's socket factory behaviour: TCP, or TLS when the client is configured with `ssl`. */
const plainOrTlsSocket: ISocketFactory = ({ host, port, ssl, onConnect }) => {
  const socket = ssl
    ? tlsConnect({ host, port, ...(isIP(host) ? {} : { servername: host }), ...ssl }, onConnect)
    : netConnect({ host, port }, onConnect);
  socket.setKeepAlive(true, KEEP_ALIVE_DELAY_MS);
  return socket;
};

/**
 * A kafkajs `socketFactory` whose sockets emit only whole Kafka responses.
 *
 * Why: kafkajs 2.2.4 keeps a connection's read buffer across reconnects of that connection. When
 * a connection drops in the middle of a response, the partial response stays in the buffer and
 * the first bytes of the next connection are read as its rest: the client then waits for a
 * response that never completes (its requests time out after `requestTimeout`, 30 s) or throws
 * `ERR_BUFFER_OUT_OF_BOUNDS` from its socket handler, uncaught (kafkajs #715). Handing kafkajs
 * whole responses only, a partial one dies with its socket.
 *
 * `createKafkajs` uses it; pass it as `socketFactory` to a `Kafka` you build yourself, wrapping
 * your own factory if you have one.
 */
export function wholeResponseSockets(inner: ISocketFactory = plainOrTlsSocket): ISocketFactory {
  return (args) => {
    const socket = inner(args);
    emitWholeResponses(socket);
    return socket;
  };
}

/** Routes the socket's `data` events through a `ResponseFramer` before any listener sees them. */
function emitWholeResponses(socket: Socket): void {
  const framer = new ResponseFramer();
  const emit = socket.emit.bind(socket);
  // Every `data` event of a net.Socket goes through its `emit`, whoever listens.
  socket.emit = (event: string | symbol, ...args: unknown[]): boolean => {
    if (event !== 'data') return emit(event, ...args);
    const responses = framer.push(args[0] as Buffer);
    return responses === undefined ? false : emit('data', responses);
  };
}
