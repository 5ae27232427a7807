/** How the default decoder reads a body: parsed JSON, a string, or the bytes untouched. */
export type BodyKind = 'json' | 'text' | 'bytes';

/** A content type split into what decoding needs. */
export interface MediaType {
  /** `type/subtype`, lower-cased, without parameters. */
  essence: string;
  /** The `charset` parameter, lower-cased, when present. */
  charset?: string;
}

// RFC 9110 token characters, on both sides of the slash.
const ESSENCE = /^[!#$%&'*+.^_`|~0-9a-z-]+\/[!#$%&'*+.^_`|~0-9a-z-]+$/;

/**
 * Parses a content type leniently. `undefined` for none (absent, or nothing before the first
 * `;`); an essence that is not `type/subtype` comes back as given, which `bodyKindOf` treats as
 * bytes.
 */
export function parseMediaType(contentType: string | undefined): MediaType | undefined {
  if (contentType === undefined) return undefined;
  const [head = '', ...parameters] = contentType.split(';');
  const essence = head.trim().toLowerCase();
  if (essence === '') return undefined;
  let charset: string | undefined;
  for (const parameter of parameters) {
    const equals = parameter.indexOf('=');
    if (equals < 0 || parameter.slice(0, equals).trim().toLowerCase() !== 'charset') continue;
    charset = parameter
      .slice(equals + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
  }
  return charset ? { essence, charset } : { essence };
}

/**
 * The decision table: JSON for no content type, `application/json` and any `+json` type; text
 * for `text/*`; bytes for everything else (including a content type that does not parse).
 */
export function bodyKindOf(mediaType: MediaType | undefined): BodyKind {
  if (mediaType === undefined) return 'json';
  const { essence } = mediaType;
  if (!ESSENCE.test(essence)) return 'bytes';
  if (essence === 'application/json' || essence.endsWith('+json')) return 'json';
  if (essence.startsWith('text/')) return 'text';
  return 'bytes';
}

/**
 * The default decoder: reads a body as its content type says (see `bodyKindOf`). Text and JSON
 * honour a `charset` the WHATWG Encoding Standard knows (UTF-8 when none is given) and refuse
 * bytes invalid in it; bytes come back as the very object the transport delivered.
 * @throws when the body is not valid in its charset, the charset is unknown or the JSON is
 *   invalid (the consumer dead-letters it as `IDEMQ_ERR_PAYLOAD_MALFORMED`).
 */
export function decodeByContentType(body: Uint8Array, contentType?: string): unknown {
  const { mediaType, kind } = readingOf(contentType);
  switch (kind) {
    case 'json':
      return JSON.parse(textOf(body, mediaType?.charset));
    case 'text':
      return textOf(body, mediaType?.charset);
    case 'bytes':
      return body;
  }
}

/** A content type as the decoder reads it. */
interface Reading {
  contentType: string | undefined;
  mediaType: MediaType | undefined;
  kind: BodyKind;
}

// The last content type's reading, reused: the messages of a source nearly always share one.
let lastReading: Reading = { contentType: undefined, mediaType: undefined, kind: 'json' };

function readingOf(contentType: string | undefined): Reading {
  if (contentType === lastReading.contentType) return lastReading;
  const mediaType = parseMediaType(contentType);
  lastReading = { contentType, mediaType, kind: bodyKindOf(mediaType) };
  return lastReading;
}

// Decoders by charset label; only labels TextDecoder accepts are kept, so the map stays small.
const decoders = new Map<string, InstanceType<typeof TextDecoder>>();

function textOf(body: Uint8Array, charset = 'utf-8'): string {
  let decoder = decoders.get(charset);
  if (!decoder) {
    try {
      decoder = new TextDecoder(charset, { fatal: true });
    } catch {
      throw new Error(`unsupported charset ${JSON.stringify(charset.slice(0, 40))}`);
    }
    decoders.set(charset, decoder);
  }
  return decoder.decode(body);
}
