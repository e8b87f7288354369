// Assertions are for programmer errors: a broken invariant crashes loudly instead of corrupting data.
// Operating errors (bad input, a full queue, a closed connection) are GridErrors, never assertions.

export class AssertionError extends Error {
  override name = 'AssertionError';
}

export function assert(condition: unknown, message = 'assertion failed'): asserts condition {
  if (!condition) throw new AssertionError(message);
}

export function unreachable(value: never, message = 'unreachable'): never {
  throw new AssertionError(`${message}: ${String(value)}`);
}
