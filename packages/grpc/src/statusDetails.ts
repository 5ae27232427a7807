/**
 * `grpc-status-details-bin` as the gRPC richer error model writes it: a serialized
 * `google.rpc.Status` whose details carry a `google.rpc.RetryInfo`. Encoded by hand (five
 * fields of the protobuf wire format) so that this package needs no protobuf runtime.
 */

export const STATUS_DETAILS_KEY = 'grpc-status-details-bin';
export const RETRY_INFO_TYPE_URL = 'type.googleapis.com/google.rpc.RetryInfo';

const VARINT = 0;
const LENGTH_DELIMITED = 2;
const MAX_DELAY_SECONDS = 315_576_000_000;

/** A `google.rpc.Status` with `code`, `message` and one `RetryInfo` of `retryDelayMs`. */
export function encodeRetryStatus(code: number, message: string, retryDelayMs: number): Buffer {
  const delayMs = Math.max(0, Math.round(retryDelayMs));
  const duration = concat([
    field(1, VARINT, varint(Math.floor(delayMs / 1000))),
    field(2, VARINT, varint((delayMs % 1000) * 1_000_000)),
  ]);
  const retryInfo = field(1, LENGTH_DELIMITED, duration);
  const any = concat([
    field(1, LENGTH_DELIMITED, Buffer.from(RETRY_INFO_TYPE_URL)),
    field(2, LENGTH_DELIMITED, retryInfo),
  ]);
  return concat([
    field(1, VARINT, varint(code)),
    field(2, LENGTH_DELIMITED, Buffer.from(message)),
    field(3, LENGTH_DELIMITED, any),
  ]);
}

/**
 * The retry delay a `google.rpc.Status` advises through its first `RetryInfo`, in ms; `undefined`
 * when it has none or the bytes are not a Status.
 */
export function retryDelayFromStatus(bytes: Uint8Array): number | undefined {
  try {
    for (const detail of fields(bytes)) {
      if (detail.number !== 3 || !(detail.value instanceof Uint8Array)) continue;
      let typeUrl = '';
      let value: Uint8Array | undefined;
      for (const part of fields(detail.value)) {
        if (part.number === 1 && part.value instanceof Uint8Array) {
          typeUrl = Buffer.from(part.value).toString('utf8');
        } else if (part.number === 2 && part.value instanceof Uint8Array) {
          value = part.value;
        }
      }
      if (typeUrl.endsWith('/google.rpc.RetryInfo') && value !== undefined) {
        return durationMs(value);
      }
    }
  } catch {
    // Bytes that do not parse advise nothing.
  }
  return undefined;
}

function durationMs(retryInfo: Uint8Array): number | undefined {
  for (const part of fields(retryInfo)) {
    if (part.number !== 1 || !(part.value instanceof Uint8Array)) continue;
    let seconds = 0;
    let nanos = 0;
    for (const unit of fields(part.value)) {
      if (unit.number === 1 && typeof unit.value === 'number') seconds = unit.value;
      if (unit.number === 2 && typeof unit.value === 'number') nanos = unit.value;
    }
    if (seconds < 0 || seconds > MAX_DELAY_SECONDS || nanos < 0) return undefined;
    return seconds * 1000 + Math.floor(nanos / 1_000_000);
  }
  return undefined;
}

interface WireField {
  number: number;
  value: number | Uint8Array;
}

/** The top-level fields of a message; other wire types than varint and bytes are refused. */
function* fields(bytes: Uint8Array): Generator<WireField> {
  let at = 0;
  while (at < bytes.length) {
    const [tag, afterTag] = readVarint(bytes, at);
    const number = Math.floor(tag / 8);
    const type = tag % 8;
    if (type === VARINT) {
      const [value, next] = readVarint(bytes, afterTag);
      at = next;
      yield { number, value };
    } else if (type === LENGTH_DELIMITED) {
      const [length, start] = readVarint(bytes, afterTag);
      const end = start + length;
      if (end > bytes.length) throw new RangeError('field runs past the end');
      at = end;
      yield { number, value: bytes.subarray(start, end) };
    } else {
      throw new RangeError(`wire type ${type} is not read here`);
    }
  }
}

function readVarint(bytes: Uint8Array, from: number): [number, number] {
  let value = 0;
  let scale = 1;
  for (let at = from; at < bytes.length && at < from + 10; at += 1) {
    const byte = bytes[at] as number;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return [value, at + 1];
    scale *= 128;
  }
  throw new RangeError('truncated varint');
}

function varint(value: number): Buffer {
  const bytes: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    bytes.push((rest % 128) | 0x80);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

function field(number: number, type: number, payload: Buffer): Buffer {
  const tag = varint(number * 8 + type);
  return type === LENGTH_DELIMITED
    ? concat([tag, varint(payload.length), payload])
    : concat([tag, payload]);
}

function concat(parts: Buffer[]): Buffer {
  return Buffer.concat(parts);
}
