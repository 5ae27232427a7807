import type { GuardableMethod, GuardedMethods } from './types.js';

/** proto's `idempotency_level` values that make a method safe to retry as it is. */
const SAFE_LEVELS = new Set<unknown>(['IDEMPOTENT', 'NO_SIDE_EFFECTS', 1, 2]);

/** What went wrong reading `methods`, for the options check. */
export interface MethodsRead {
  guarded: Map<string, GuardableMethod>;
  problems: string[];
}

/**
 * The guarded methods by path. A method definition is guarded as named (a streaming one is a
 * problem); a service contributes its unary methods whose proto does not declare them safe to
 * retry (`idempotency_level` IDEMPOTENT or NO_SIDE_EFFECTS, as proto-loader reports it).
 */
export function readGuardedMethods(methods: unknown): MethodsRead {
  const guarded = new Map<string, GuardableMethod>();
  const problems: string[] = [];
  if (!Array.isArray(methods) || methods.length === 0) {
    problems.push('methods must list at least one service or method definition');
    return { guarded, problems };
  }
  for (const entry of methods as unknown[]) {
    if (isMethod(entry)) {
      if (entry.requestStream || entry.responseStream) {
        problems.push(
          `${entry.path} is a streaming method; only unary methods can be guarded (see the README)`,
        );
      } else {
        guarded.set(entry.path, entry);
      }
    } else if (
      typeof entry === 'object' &&
      entry !== null &&
      Object.values(entry).every(isMethod)
    ) {
      for (const method of Object.values(entry as GuardedMethods) as GuardableMethod[]) {
        const streaming = method.requestStream || method.responseStream;
        if (!streaming && !SAFE_LEVELS.has(method.options?.idempotency_level)) {
          guarded.set(method.path, method);
        }
      }
    } else {
      problems.push(
        'methods must hold service definitions or method definitions (with path and serializers)',
      );
    }
  }
  return { guarded, problems };
}

function isMethod(value: unknown): value is GuardableMethod {
  if (typeof value !== 'object' || value === null) return false;
  const method = value as Record<string, unknown>;
  return (
    typeof method.path === 'string' &&
    typeof method.requestSerialize === 'function' &&
    typeof method.responseSerialize === 'function' &&
    typeof method.responseDeserialize === 'function'
  );
}
