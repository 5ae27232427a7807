import { createServer, connect as netConnect, type Server, type Socket } from 'node:net';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { ResponseFramer, wholeResponseSockets } from './wholeResponseSockets.js';

/** A Kafka response frame: 4-byte big-endian size, then the body. */
function frame(body: Uint8Array): Buffer {
  const out = Buffer.alloc(4 + body.length);
  out.writeInt32BE(body.length, 0);
  out.set(body, 4);
  return out;
}

/** Splits a buffer at the given cut points (any order, duplicates allowed). */
function split(data: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((cut) => cut % (data.length + 1)))].sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let start = 0;
  for (const point of [...points, data.length]) {
    if (point > start) pieces.push(data.subarray(start, point));
    start = point;
  }
  return pieces;
}

/** Reads the frames out of a buffer made of whole frames only; throws on a partial one. */
function framesOf(data: Buffer): Buffer[] {
  const frames: Buffer[] = [];
  let at = 0;
  while (at < data.length) {
    const end = at + 4 + data.readInt32BE(at);
    if (end > data.length) throw new Error(`partial frame at ${at}`);
    frames.push(data.subarray(at + 4, end));
    at = end;
  }
  return frames;
}

describe('ResponseFramer', () => {
  it('however the stream is chunked, hands out whole frames only, in order, and holds back a partial one', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 300 }), { minLength: 1, maxLength: 12 }),
        fc.array(fc.nat(), { maxLength: 20 }),
        fc.nat(),
        (bodies, cuts, tail) => {
          const whole = Buffer.concat(bodies.map(frame));
          // The stream ends inside one more frame, as when a connection drops mid-response.
          const last = frame(new Uint8Array(20).fill(7));
          const partial = last.subarray(0, tail % last.length);
          const framer = new ResponseFramer();
          const handedOut: Buffer[] = [];
          for (const piece of split(Buffer.concat([whole, partial]), cuts)) {
            const out = framer.push(piece);
            if (out !== undefined) {
              expect(out.length).toBeGreaterThan(0);
              handedOut.push(Buffer.from(out));
            }
          }
          const frames = handedOut.flatMap(framesOf);
          expect(frames.map((body) => body.toString('hex'))).toEqual(
            bodies.map((body) => Buffer.from(body).toString('hex')),
          );
        },
      ),
    );
  });

  it('a frame of one byte at a time comes out once, when its last byte arrives', () => {
    const framer = new ResponseFramer();
    const data = frame(Buffer.from('hello'));
    const outs = [...data].map((byte) => framer.push(Buffer.from([byte])));
    expect(outs.slice(0, -1).every((out) => out === undefined)).toBe(true);
    expect(outs.at(-1)?.toString('hex')).toBe(data.toString('hex'));
  });

  it('passes a negative size through as it came (not a Kafka stream), then starts afresh', () => {
    const framer = new ResponseFramer();
    const bad = Buffer.from([0xff, 0xff, 0xff, 0xfe, 1, 2]);
    expect(framer.push(bad)?.toString('hex')).toBe(bad.toString('hex'));
    const good = frame(Buffer.from('ok'));
    expect(framer.push(good)?.toString('hex')).toBe(good.toString('hex'));
  });
});

describe('wholeResponseSockets', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(
      servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))),
    );
  });

  /** A server that writes `pieces` with a pause between each, then closes the connection. */
  async function serverWriting(pieces: Buffer[]): Promise<number> {
    const server = createServer(async (socket) => {
      for (const piece of pieces) {
        socket.write(piece);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      socket.end();
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (typeof address !== 'object' || address === null) throw new Error('no address');
    return address.port;
  }

  it("a connection that ends mid-response gives its listeners the whole responses, never the partial one's bytes", async () => {
    const first = frame(Buffer.from('first response'));
    const second = frame(Buffer.from('second response, cut short by the connection'));
    const port = await serverWriting([
      first.subarray(0, 3),
      first.subarray(3),
      second.subarray(0, 9),
    ]);
    let opened: Socket | undefined;
    const factory = wholeResponseSockets(({ onConnect }) => {
      opened = netConnect({ host: '127.0.0.1', port }, onConnect);
      return opened;
    });
    const received: Buffer[] = [];
    const socket = factory({ host: 'broker', port: 9092, ssl: {}, onConnect: () => undefined });
    expect(socket).toBe(opened);
    socket.on('data', (data: Buffer) => received.push(data));
    await new Promise((resolve) => socket.on('close', resolve));
    expect(Buffer.concat(received).toString('hex')).toBe(first.toString('hex'));
  });
});
