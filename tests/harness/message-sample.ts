// Random member-protocol message bodies for codec tests: a seeded generator that walks a message
// kind's schema (src/cluster/messages.ts) the way the codec does. Integers sit at and inside their
// ranges, doubles include -0, infinities and extremes, strings mix 1- to 4-byte UTF-8 with NUL and a
// BOM, arrays hold 0-3 items.
import { MESSAGE_SCHEMAS, type Message, type MessageKind } from '../../src/cluster/messages.js';
import type { Scalar, Schema } from '../../src/cluster/protocol/schema-codec.js';
import type { SeededRandom } from '../../src/util/prng.js';

// Strings mix 1-, 2-, 3- and 4-byte UTF-8 (a surrogate pair), NUL and a BOM, which must survive.
const CHARS = ['a', 'Z', '0', ' ', ':', '\u0000', 'é', 'ß', '€', '中', '\ufeff', '😀', '𝄞'];
const F64_EDGES = [0, -0, 1, -1, 0.1, Number.MIN_VALUE, Number.MAX_VALUE, -Number.MAX_VALUE, Infinity, -Infinity, 1_700_000_000_123.5];

export function pick<T>(rnd: SeededRandom, xs: readonly T[]): T {
  return xs[rnd.nextInt(xs.length)] as T;
}

/** An integer in [lo, hi], the bounds themselves a quarter of the time. */
export function intIn(rnd: SeededRandom, lo: number, hi: number): number {
  const r = rnd.next();
  if (r < 0.125) return lo;
  if (r < 0.25) return hi;
  return lo + Math.floor(rnd.next() * (hi - lo + 1));
}

function scalar(s: Scalar, rnd: SeededRandom): unknown {
  switch (s) {
    case 'u8':
      return intIn(rnd, 0, 0xff);
    case 'u16':
      return intIn(rnd, 0, 0xffff);
    case 'u32':
      return intIn(rnd, 0, 0xffff_ffff);
    case 'i32':
      return intIn(rnd, -0x8000_0000, 0x7fff_ffff);
    case 'u53':
      // High and low words drawn apart so both halves of the u64 are exercised.
      return rnd.next() < 0.25 ? pick(rnd, [0, 1, 0xffff_ffff, 0x1_0000_0000, Number.MAX_SAFE_INTEGER]) : intIn(rnd, 0, 0x1f_ffff) * 0x1_0000_0000 + intIn(rnd, 0, 0xffff_ffff);
    case 'f64':
      return rnd.next() < 0.4 ? pick(rnd, F64_EDGES) : (rnd.next() - 0.5) * 2 ** rnd.nextInt(80);
    case 'bool':
      return rnd.next() < 0.5;
    case 'str':
      return Array.from({ length: rnd.nextInt(12) }, () => pick(rnd, CHARS)).join('');
    case 'strOrNull':
      return rnd.next() < 0.3 ? null : scalar('str', rnd);
    case 'bytes':
      return Uint8Array.from({ length: rnd.nextInt(17) }, () => rnd.nextInt(256));
  }
}

/** A random value of `schema`: the generator walks the schema as the codec does. */
export function sample(schema: Schema, rnd: SeededRandom): unknown {
  if (typeof schema === 'string') return scalar(schema as Scalar, rnd);
  if (Array.isArray(schema)) return Array.from({ length: rnd.nextInt(4) }, () => sample((schema as readonly [Schema])[0], rnd));
  const out: Record<string, unknown> = {};
  for (const [field, s] of Object.entries(schema as Record<string, Schema>)) out[field] = sample(s, rnd);
  return out;
}

export function sampleMessage(kind: MessageKind, rnd: SeededRandom): Message {
  const callId = rnd.next() < 0.3 ? 0 : intIn(rnd, 1, Number.MAX_SAFE_INTEGER);
  return { kind, callId, body: sample(MESSAGE_SCHEMAS[kind], rnd) } as Message;
}
