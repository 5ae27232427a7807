/**
 * True for a name a key may travel under: text metadata (lower case, no `-bin` suffix, which
 * marks bytes) outside the `grpc-` names the protocol reserves.
 */
export function isKeyMetadataName(name: unknown): boolean {
  return (
    typeof name === 'string' &&
    /^[0-9a-z_.-]+$/.test(name) &&
    !name.endsWith('-bin') &&
    !name.startsWith('grpc-')
  );
}
