import { describe, expect, it } from 'vitest';
import { replayResponse, type StoredResponse } from './responseEnvelope.js';

describe('the stored response envelope', () => {
  const binary = new Uint8Array([0, 255, 1, 128, 10, 13, 0x22]);
  const stored: StoredResponse = {
    status: 201,
    headers: [
      ['content-type', 'application/octet-stream'],
      ['location', '/orders/7'],
    ],
    body: binary,
  };

  it('replays status, headers and bytes, marked as a replay', async () => {
    const response = replayResponse(stored);
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe('/orders/7');
    expect(response.headers.get('idempotent-replayed')).toBe('true');
    expect(response.headers.get('idempotent-body-omitted')).toBeNull();
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(binary);
  });

  it('replays an omitted body as empty, saying why', async () => {
    const response = replayResponse({ status: 200, headers: [], bodyOmitted: 'too-large' });
    expect(response.headers.get('idempotent-body-omitted')).toBe('too-large');
    expect((await response.arrayBuffer()).byteLength).toBe(0);
  });

  it('replays a 204 without a body', () => {
    expect(replayResponse({ status: 204, headers: [], body: new Uint8Array(0) }).status).toBe(204);
  });
});
