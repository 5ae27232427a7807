import { createHash } from 'node:crypto';
import type { Message, MessageAttributeValue } from '@aws-sdk/client-sqs';
import { WireNames } from '@idemq/core';
import { type CloudEventIdentity, cloudEventIdentity } from '@idemq/core/adapter';
import { CloudEventsAttributes } from './cloudEvents.js';

/**
 * Message attributes this transport writes (core's wire names). SQS allows 10 per message, so
 * headers are not one attribute each: they travel together as one JSON attribute, and a message
 * carries at most these five whatever the number of headers.
 */
export const Attributes = {
  requestId: WireNames.requestId,
  headers: WireNames.headers,
  contentType: WireNames.contentType,
  key: WireNames.key,
  bodyEncoding: WireNames.bodyEncoding,
} as const;

/**
 * The names these attributes had before core's wire names. Still read, so that a message sent
 * before an upgrade keeps its requestId, headers, content type, key and body encoding after it.
 */
export const FormerAttributes = {
  requestId: 'idemq-request-id',
  headers: 'idemq-headers',
  contentType: 'idemq-content-type',
  key: 'idemq-key',
  bodyEncoding: 'idemq-body-encoding',
} as const satisfies Record<keyof typeof Attributes, string>;

/** SQS's limit on message attributes per message (quotas-messages). */
export const MAX_ATTRIBUTES = 10;

const OWN = new Set<string>([...Object.values(Attributes), ...Object.values(FormerAttributes)]);

/** Header a delivery carries when the transport could not decode part of the message. */
export const DECODE_ERROR_HEADER = WireNames.decodeError;

type AttributeMap = Record<string, MessageAttributeValue>;

/** One of this transport's attributes of a received message, under its name or its former one. */
export function ownAttribute(
  attributes: Readonly<AttributeMap> | undefined,
  name: keyof typeof Attributes,
): MessageAttributeValue | undefined {
  return attributes?.[Attributes[name]] ?? attributes?.[FormerAttributes[name]];
}

/** What the transport stores on the wire besides the body. */
export interface Envelope {
  requestId: string;
  headers: Readonly<Record<string, string>>;
  contentType?: string;
  key?: string;
}

/** A body as SQS can carry it: text of the allowed characters, or base64 with a marker. */
export interface WireBody {
  text: string;
  encoding: 'base64' | 'empty' | undefined;
}

// SQS accepts only these characters in a body (#x9 | #xA | #xD | #x20–#xD7FF | #xE000–#xFFFD |
// #x10000–#x10FFFF); anything else is rejected, or replaced by U+FFFD on some paths.
const FORBIDDEN_CHARS = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Encodes body bytes for SQS. Valid UTF-8 made of allowed characters goes as is (readable in the
 * console, decodable by any consumer); other bytes go as base64 with `x-idemq-body-encoding`. SQS
 * needs at least one character, so an empty body is a marked placeholder.
 */
export function encodeWireBody(bytes: Uint8Array): WireBody {
  if (bytes.length === 0) return { text: '-', encoding: 'empty' };
  let text: string | undefined;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    text = undefined;
  }
  if (text !== undefined && !FORBIDDEN_CHARS.test(text)) return { text, encoding: undefined };
  return { text: Buffer.from(bytes).toString('base64'), encoding: 'base64' };
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Decodes a received body; `error` says why the marked encoding could not be undone. */
export function decodeWireBody(
  text: string,
  encoding: string | undefined,
): { bytes: Uint8Array; error?: string } {
  switch (encoding) {
    case undefined:
      return { bytes: Buffer.from(text, 'utf8') };
    case 'empty':
      return { bytes: new Uint8Array(0) };
    case 'base64':
      if (BASE64.test(text)) return { bytes: Buffer.from(text, 'base64') };
      return { bytes: Buffer.from(text, 'utf8'), error: 'body is marked base64 but is not base64' };
    default:
      return {
        bytes: Buffer.from(text, 'utf8'),
        error: `unknown body encoding ${JSON.stringify(encoding.slice(0, 40))}`,
      };
  }
}

/** The message attributes of an outgoing message. */
export function packAttributes(envelope: Envelope, body: WireBody): AttributeMap {
  const attributes: AttributeMap = { [Attributes.requestId]: text(envelope.requestId) };
  if (Object.keys(envelope.headers).length > 0) {
    attributes[Attributes.headers] = text(JSON.stringify(envelope.headers));
  }
  // SQS refuses empty attribute values: an empty content type or key is as good as none.
  if (envelope.contentType) attributes[Attributes.contentType] = text(envelope.contentType);
  if (envelope.key) attributes[Attributes.key] = text(envelope.key);
  if (body.encoding !== undefined) attributes[Attributes.bodyEncoding] = text(body.encoding);
  return attributes;
}

/** What a received message carries, read leniently: a malformed part never throws. */
export interface Unpacked {
  /** The requestId attribute's value as found (undefined when absent). */
  requestId: string | undefined;
  headers: Record<string, string>;
  /** idemq's content-type attribute, else another producer's (see `CloudEventsAttributes`). */
  contentType: string | undefined;
  /** The CloudEvents `ce_id` and `ce_source` attributes as found (also left in `headers`). */
  cloudEvent: CloudEventIdentity | undefined;
  key: string | undefined;
  body: Uint8Array;
  /** True when the message was not written by idemq (no requestId attribute). */
  foreign: boolean;
}

/**
 * Reads a received message. Attributes other than idemq's (a message from another producer)
 * become headers too; binary ones are left out. Problems decoding are reported in the
 * `x-idemq-decode-error` header rather than thrown: the engine decides what to do.
 */
export function unpackMessage(message: Message): Unpacked {
  const attributes = message.MessageAttributes ?? {};
  const headers: Record<string, string> = {};
  const problems: string[] = [];
  for (const [name, value] of Object.entries(attributes)) {
    if (OWN.has(name) || value.StringValue === undefined) continue;
    headers[name] = value.StringValue;
  }
  const packed = ownAttribute(attributes, 'headers')?.StringValue;
  if (packed !== undefined) {
    const parsed = parseHeaders(packed);
    if (parsed) Object.assign(headers, parsed);
    else problems.push(`${Attributes.headers} is not a JSON object of strings`);
  }
  const body = decodeWireBody(
    message.Body ?? '',
    ownAttribute(attributes, 'bodyEncoding')?.StringValue,
  );
  if (body.error) problems.push(body.error);
  if (problems.length > 0) headers[DECODE_ERROR_HEADER] = problems.join('; ');
  const requestId = ownAttribute(attributes, 'requestId')?.StringValue;
  return {
    requestId,
    headers,
    contentType:
      ownAttribute(attributes, 'contentType')?.StringValue ??
      attributes[CloudEventsAttributes.contentType]?.StringValue ??
      attributes[CloudEventsAttributes.dataContentType]?.StringValue,
    cloudEvent: cloudEventIdentity(
      attributeValue(attributes[CloudEventsAttributes.id]),
      attributeValue(attributes[CloudEventsAttributes.source]),
    ),
    key: ownAttribute(attributes, 'key')?.StringValue,
    body: body.bytes,
    foreign: requestId === undefined,
  };
}

/** An attribute's value as found: its text, else its bytes. */
function attributeValue(attribute: MessageAttributeValue | undefined): unknown {
  return attribute?.StringValue ?? attribute?.BinaryValue;
}

function parseHeaders(json: string): Record<string, string> | undefined {
  try {
    const value: unknown = JSON.parse(json);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    const entries = Object.entries(value);
    if (!entries.every(([, v]) => typeof v === 'string')) return undefined;
    return Object.fromEntries(entries) as Record<string, string>;
  } catch {
    return undefined;
  }
}

/**
 * The attributes of a dead-letter copy: the original's, with the reason headers merged into the
 * packed headers. This transport's own attributes are written under their current names (a
 * message sent before the upgrade comes out renamed). Attributes of another producer are folded
 * into the packed headers when keeping them would cross the 10-attribute limit (they read back as
 * the same headers).
 */
export function deadLetterAttributes(
  original: Message,
  extraHeaders: Readonly<Record<string, string>>,
): AttributeMap {
  const source = original.MessageAttributes ?? {};
  const unpacked = unpackMessage(original);
  const own: AttributeMap = {};
  const foreign: AttributeMap = {};
  for (const [name, value] of Object.entries(source)) {
    if (!OWN.has(name)) foreign[name] = value;
  }
  for (const name of ['requestId', 'contentType', 'key', 'bodyEncoding'] as const) {
    const value = ownAttribute(source, name);
    if (value !== undefined) own[Attributes[name]] = value;
  }
  const packedHeaders: Record<string, string> = {};
  const ownHeaders = ownAttribute(source, 'headers')?.StringValue;
  const parsed = ownHeaders === undefined ? undefined : parseHeaders(ownHeaders);
  if (parsed) Object.assign(packedHeaders, parsed);
  const keepForeign = Object.keys(own).length + Object.keys(foreign).length + 1 <= MAX_ATTRIBUTES;
  if (!keepForeign) {
    for (const [name, value] of Object.entries(unpacked.headers)) {
      if (name in foreign) packedHeaders[name] = value;
    }
  }
  Object.assign(packedHeaders, extraHeaders);
  const binaryForeign = Object.fromEntries(
    Object.entries(foreign).filter(([, value]) => value.StringValue === undefined),
  );
  return {
    ...(keepForeign ? foreign : fitBinary(binaryForeign, Object.keys(own).length + 1)),
    ...own,
    [Attributes.headers]: text(JSON.stringify(packedHeaders)),
  };
}

/** Keeps binary attributes of another producer while room is left under the limit. */
function fitBinary(binary: AttributeMap, used: number): AttributeMap {
  return Object.fromEntries(Object.entries(binary).slice(0, Math.max(0, MAX_ATTRIBUTES - used)));
}

/**
 * The size SQS counts against `MaximumMessageSize`: the body plus, per attribute, its name, data
 * type and value (quotas-messages, "message attributes").
 */
export function wireSize(body: string, attributes: AttributeMap): number {
  let size = Buffer.byteLength(body, 'utf8');
  for (const [name, value] of Object.entries(attributes)) {
    size += Buffer.byteLength(name, 'utf8') + Buffer.byteLength(value.DataType ?? '', 'utf8');
    if (value.StringValue !== undefined) size += Buffer.byteLength(value.StringValue, 'utf8');
    if (value.BinaryValue !== undefined) size += value.BinaryValue.byteLength;
  }
  return size;
}

// MessageGroupId and MessageDeduplicationId: 1–128 characters of alphanumerics and punctuation.
const SQS_ID = /^[!-~]{1,128}$/;

/**
 * An id SQS accepts for `MessageGroupId` / `MessageDeduplicationId`: the value itself when it
 * fits the allowed characters and length, else its SHA-256 (hex). The original value still
 * travels in its own attribute.
 */
export function sqsId(value: string): string {
  return SQS_ID.test(value) ? value : createHash('sha256').update(value, 'utf8').digest('hex');
}

function text(value: string): MessageAttributeValue {
  return { DataType: 'String', StringValue: value };
}
