import { InvalidOptionsError } from '../errors/usage.js';

/**
 * Collects every problem found in an options object, so the user fixes them all in one go
 * instead of one error per run.
 */
export class OptionsCheck {
  private readonly problems: string[] = [];

  constructor(private readonly component: string) {}

  /** Records a problem when `ok` is false. */
  expect(ok: boolean, problem: string): this {
    if (!ok) this.problems.push(problem);
    return this;
  }

  /** An integer in [min, max]; `undefined` passes when the field is optional. */
  integer(name: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): this {
    if (value === undefined) return this;
    return this.expect(
      typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max,
      `${name} must be an integer from ${min} to ${max}, got ${show(value)}`,
    );
  }

  /** A number in [min, max]; `undefined` passes. */
  number(name: string, value: unknown, min: number, max: number): this {
    if (value === undefined) return this;
    return this.expect(
      typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max,
      `${name} must be a number from ${min} to ${max}, got ${show(value)}`,
    );
  }

  /** A non-empty string (required unless `optional`). */
  text(name: string, value: unknown, optional = false): this {
    if (value === undefined && optional) return this;
    return this.expect(
      typeof value === 'string' && value.length > 0,
      `${name} must be a non-empty string, got ${show(value)}`,
    );
  }

  /** One of the listed literals; `undefined` passes. */
  oneOf(name: string, value: unknown, allowed: readonly unknown[]): this {
    if (value === undefined) return this;
    return this.expect(
      allowed.includes(value),
      `${name} must be one of ${allowed.map(show).join(', ')}, got ${show(value)}`,
    );
  }

  /** A function (required unless `optional`). */
  fn(name: string, value: unknown, optional = false): this {
    if (value === undefined && optional) return this;
    return this.expect(
      typeof value === 'function',
      `${name} must be a function, got ${show(value)}`,
    );
  }

  /** An object with the listed methods. */
  implements(name: string, value: unknown, methods: readonly string[]): this {
    const missing =
      typeof value === 'object' && value !== null
        ? methods.filter((m) => typeof (value as Record<string, unknown>)[m] !== 'function')
        : methods;
    return this.expect(
      missing.length === 0,
      `${name} must be an object with ${methods.join(', ')}() (missing ${missing.join(', ')})`,
    );
  }

  /** Throws one `InvalidOptionsError` listing every recorded problem. */
  done(): void {
    if (this.problems.length > 0) throw new InvalidOptionsError(this.component, this.problems);
  }
}

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'function') return 'a function';
  if (value === null) return 'null';
  if (typeof value === 'object') return Array.isArray(value) ? 'an array' : 'an object';
  return String(value);
}
