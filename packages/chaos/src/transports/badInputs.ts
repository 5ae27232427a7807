/**
 * F07's corpus: what a careless or hostile producer can send straight through a broker's own
 * client. Each transport writes the cases in its own wire format (`kits.ts`).
 */
import { ErrorCodes } from '@idemq/core';

export const BAD_INPUT_KINDS = [
  'missing-id',
  'empty-id',
  'oversized-id',
  'non-utf8-id',
  'malformed-json-body',
  'non-utf8-body',
] as const;
export type BadInputKind = (typeof BAD_INPUT_KINDS)[number];

/** 1 KiB + 1 byte: above the 1 KiB bound and the engine's 512-byte default. */
export const OVERSIZED_ID = 'x'.repeat(1025);
export const NON_UTF8_ID = Uint8Array.from([0x61, 0xc3, 0x28]);
export const MALFORMED_JSON = '{"n": 1';
export const NON_UTF8_BODY = Uint8Array.from([0xff, 0xfe, 0x7b, 0x7d]);

/** The code family each kind must be dead-lettered with. */
export function expectedCodeFamily(kind: BadInputKind): string {
  return kind.endsWith('-id') ? 'IDEMQ_ERR_REQUEST_ID_' : ErrorCodes.PAYLOAD_MALFORMED;
}
