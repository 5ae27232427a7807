import { describe, expect, it } from 'vitest';
import { RequestBodyTooLargeError } from './errors.js';
import { readReplayableBody } from './replayableBody.js';

const url = 'http://127.0.0.1/';
const text = (bytes: Uint8Array | null) => new TextDecoder().decode(bytes ?? new Uint8Array());

function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

function post(body: RequestInit['body']): Request {
  return new Request(url, { method: 'POST', body, duplex: 'half' } as RequestInit);
}

describe('readReplayableBody', () => {
  it('answers null for a request without a body', async () => {
    expect(await readReplayableBody(post(null), 10)).toBeNull();
  });

  it('buffers every body kind fetch takes into the bytes fetch would send', async () => {
    const bytes = new Uint8Array([0, 1, 2, 255]);
    expect(text(await readReplayableBody(post('héllo'), 100))).toBe('héllo');
    expect(await readReplayableBody(post(bytes), 100)).toEqual(bytes);
    expect(await readReplayableBody(post(bytes.buffer), 100)).toEqual(bytes);
    expect(await readReplayableBody(post(new Blob(['a', 'b'])), 100)).toEqual(
      new TextEncoder().encode('ab'),
    );
    expect(
      text(await readReplayableBody(post(new URLSearchParams({ a: '1', b: 'x y' })), 100)),
    ).toBe('a=1&b=x+y');
    expect(text(await readReplayableBody(post(streamOf(['ab', 'cd', 'ef'])), 100))).toBe('abcdef');
  });

  it('keeps a FormData body in step with the boundary in the content type', async () => {
    const form = new FormData();
    form.set('field', 'value');
    const request = post(form);
    const boundary = /boundary=(.+)$/.exec(request.headers.get('content-type') ?? '')?.[1];
    const body = text(await readReplayableBody(request, 10_000));
    expect(boundary).toBeDefined();
    expect(body).toContain(`--${boundary}`);
    expect(body).toContain('value');
  });

  it('takes a body of exactly maxBytes', async () => {
    expect(text(await readReplayableBody(post(streamOf(['12345', '678'])), 8))).toBe('12345678');
  });

  it('refuses a body over maxBytes with a typed error, without reading the rest', async () => {
    let pulls = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulls += 1;
        controller.enqueue(new Uint8Array(64));
      },
    });
    const failure = readReplayableBody(post(endless), 200);
    await expect(failure).rejects.toBeInstanceOf(RequestBodyTooLargeError);
    await expect(failure).rejects.toMatchObject({
      code: 'IDEMQ_ERR_HTTP_BODY_TOO_LARGE',
      maxBytes: 200,
      bytes: 256,
    });
    expect(pulls).toBeLessThan(10);
  });

  it('stops reading a stream when the signal aborts, with its reason', async () => {
    const never = new ReadableStream<Uint8Array>({ pull: () => new Promise(() => {}) });
    const controller = new AbortController();
    const reading = readReplayableBody(post(never), 100, controller.signal);
    const reason = new Error('caller gave up');
    controller.abort(reason);
    await expect(reading).rejects.toBe(reason);
  });
});
