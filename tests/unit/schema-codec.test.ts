// The compiled schema codec (schema-codec.ts) against a plain walk of the schema written here: for
// random schemas and random values, the same bytes, the same decoded values, and the same errors for
// truncated, extended and corrupted payloads and for values that do not fit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeWith, encodedSizeBound, encodeWith, STRING_BYTES_MAX, type Schema } from '../../src/cluster/protocol/schema-codec.js';
import { ByteReader, ByteWriter } from '../../src/util/bytes.js';
import { SeededRandom } from '../../src/util/prng.js';

const SCALARS = ['u8', 'u16', 'u32', 'i32', 'u53', 'f64', 'bool', 'str', 'bytes', 'strOrNull'] as const;

// ── the reference: a direct walk of the schema ──────────────────────────────────────────────────

function refWrite(w: ByteWriter, s: Schema, v: unknown): void {
  if (typeof s === 'string') {
    const x = v as never;
    if (s === 'u8') w.u8(x);
    else if (s === 'u16') w.u16(x);
    else if (s === 'u32') w.u32(x);
    else if (s === 'i32') w.i32(x);
    else if (s === 'u53') w.u64(x);
    else if (s === 'f64') w.f64(x);
    else if (s === 'bool') w.bool(x);
    else if (s === 'str') w.string(x, STRING_BYTES_MAX);
    else if (s === 'bytes') w.bytes(x, 0x7fff_ffff);
    else {
      w.bool(v !== null);
      if (v !== null) w.string(x, STRING_BYTES_MAX);
    }
    return;
  }
  if (Array.isArray(s)) {
    const a = v as unknown[];
    w.u32(a.length);
    for (const item of a) refWrite(w, s[0] as Schema, item);
    return;
  }
  for (const f of Object.keys(s)) refWrite(w, (s as Record<string, Schema>)[f] as Schema, (v as Record<string, unknown>)[f]);
}

function refRead(r: ByteReader, s: Schema, path: string): unknown {
  if (typeof s === 'string') {
    if (s === 'u8') return r.u8();
    if (s === 'u16') return r.u16();
    if (s === 'u32') return r.u32();
    if (s === 'i32') return r.i32();
    if (s === 'u53') return r.u64();
    if (s === 'f64') return r.f64();
    if (s === 'bool') return r.bool();
    if (s === 'str') return r.string(STRING_BYTES_MAX, path);
    if (s === 'bytes') return r.bytes(0x7fff_ffff, path);
    return r.bool() ? r.string(STRING_BYTES_MAX, path) : null;
  }
  if (Array.isArray(s)) {
    const n = r.count(r.remaining, `${path} item count`);
    const out: unknown[] = [];
    for (let i = 0; i < n; i++) out.push(refRead(r, s[0] as Schema, path));
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const f of Object.keys(s)) out[f] = refRead(r, (s as Record<string, Schema>)[f] as Schema, `${path}.${f}`);
  return out;
}

function refDecode(s: Schema, payload: Uint8Array, what: string): unknown {
  const r = new ByteReader(payload);
  const v = refRead(r, s, what);
  r.expectEnd(what);
  return v;
}

// ── random schemas and values ───────────────────────────────────────────────────────────────────

function randomSchema(rnd: SeededRandom, depth: number): Schema {
  const k = rnd.nextInt(depth > 2 ? 10 : 14);
  if (k < 10) return SCALARS[k] as Schema;
  if (k < 12) return [randomSchema(rnd, depth + 1)] as const;
  const fields: Record<string, Schema> = {};
  const n = 1 + rnd.nextInt(5);
  // Field names that need quoting in generated source too.
  const names = ['a', 'b', 'c-d', 'constructor', 'x y', "q'uote", '0', 'événement'];
  for (let i = 0; i < n; i++) fields[`${names[rnd.nextInt(names.length)] as string}${i}`] = randomSchema(rnd, depth + 1);
  return fields;
}

const TEXTS = ['', 'a', 'orders', 'text/plain', 'ünïcødé', '日本語', 'x'.repeat(40), '\u{1F600} emoji', 'a\u0000b'];

function randomValue(rnd: SeededRandom, s: Schema): unknown {
  if (typeof s === 'string') {
    switch (s) {
      case 'u8':
        return rnd.nextInt(256);
      case 'u16':
        return rnd.nextInt(65536);
      case 'u32':
        return [0, 1, 0xffff_ffff, rnd.nextInt(2 ** 32)][rnd.nextInt(4)];
      case 'i32':
        return [-(2 ** 31), 2 ** 31 - 1, -1, rnd.nextInt(2 ** 32) - 2 ** 31][rnd.nextInt(4)];
      case 'u53':
        return [0, Number.MAX_SAFE_INTEGER, rnd.nextInt(2 ** 32) * 2 ** 20 + rnd.nextInt(2 ** 20)][rnd.nextInt(3)];
      case 'f64':
        return [0, -0, 1.5, -1e300, Infinity, -Infinity, 1.7e12 + rnd.next(), Number.MIN_VALUE][rnd.nextInt(8)];
      case 'bool':
        return rnd.nextInt(2) === 1;
      case 'str':
        return TEXTS[rnd.nextInt(TEXTS.length)];
      case 'strOrNull':
        return rnd.nextInt(3) === 0 ? null : TEXTS[rnd.nextInt(TEXTS.length)];
      case 'bytes':
        return Buffer.from(Array.from({ length: rnd.nextInt(40) }, () => rnd.nextInt(256)));
    }
  }
  if (Array.isArray(s)) return Array.from({ length: rnd.nextInt(4) }, () => randomValue(rnd, s[0] as Schema));
  const out: Record<string, unknown> = {};
  for (const f of Object.keys(s)) out[f] = randomValue(rnd, (s as Record<string, Schema>)[f] as Schema);
  return out;
}

function outcome(f: () => unknown): { ok: unknown } | { error: string } {
  try {
    return { ok: f() };
  } catch (e) {
    return { error: `${(e as Error).name} ${(e as { code?: string }).code ?? ''} ${(e as Error).message}` };
  }
}

test('compiled codec: same bytes, values and errors as a plain walk of the schema (2,000 random schemas)', () => {
  const rnd = new SeededRandom(20261126);
  for (let round = 0; round < 2000; round++) {
    const schema = randomSchema(rnd, 0);
    const value = randomValue(rnd, schema);
    const w = new ByteWriter(16);
    refWrite(w, schema, value);
    const expected = Buffer.from(w.finish());
    const got = encodeWith(schema, value as never, 16);
    assert.deepEqual(got, expected, `round ${round}: encoding of ${JSON.stringify(schema)}`);
    assert.ok(encodedSizeBound(schema, value as never) >= got.length, `round ${round}: the size bound is below the ${got.length} bytes written`);
    assert.deepEqual(decodeWith(schema, got, 'm'), value, `round ${round}: decoding`);
    assert.deepEqual(decodeWith(schema, got, 'm', { views: true }), value, `round ${round}: decoding into views`);
    // Truncated, extended and corrupted payloads fail (or succeed) the same way.
    const variants: Uint8Array[] = [expected.subarray(0, rnd.nextInt(expected.length + 1)), Buffer.concat([expected, Buffer.from([rnd.nextInt(256)])])];
    if (expected.length > 0) {
      const flipped = Buffer.from(expected);
      flipped[rnd.nextInt(flipped.length)] = rnd.nextInt(256);
      variants.push(flipped);
    }
    for (const v of variants) {
      const expectedOutcome = outcome(() => refDecode(schema, v, 'm'));
      assert.deepEqual(outcome(() => decodeWith(schema, v, 'm')), expectedOutcome, `round ${round}: a bad payload`);
      assert.deepEqual(outcome(() => decodeWith(schema, v, 'm', { views: true })), expectedOutcome, `round ${round}: a bad payload, views`);
    }
  }
});

test('compiled codec: a value that does not fit its schema is an assertion naming the field', () => {
  const schema = { a: 'u32', list: [{ s: 'str', n: 'u8' }], o: 'strOrNull', b: 'bytes' } as const;
  const cases: [unknown, RegExp][] = [
    [{ a: 1.5, list: [], o: null, b: Buffer.alloc(0) }, /^\.a: expected an integer, got 1\.5$/],
    [{ a: 1, list: [{ s: 3, n: 1 }], o: null, b: Buffer.alloc(0) }, /^\.list\.s: expected a string$/],
    [{ a: 1, list: [{ s: 'x', n: 300 }], o: null, b: Buffer.alloc(0) }, /u8 out of range: 300/],
    [{ a: 1, list: 'no', o: null, b: Buffer.alloc(0) }, /^\.list: expected an array$/],
    [{ a: 1, list: [], o: 5, b: Buffer.alloc(0) }, /^\.o: expected a string or null$/],
    [{ a: 1, list: [], o: null, b: 'str' }, /^\.b: expected bytes$/],
    [null, /^: expected an object$/],
  ];
  for (const [value, message] of cases) assert.throws(() => encodeWith(schema, value as never), (e: Error) => e.name === 'AssertionError' && message.test(e.message));
});

test('decoder errors name the field with the caller’s prefix', () => {
  const schema = { name: 'str', items: ['u32'] } as const;
  const bytes = encodeWith(schema, { name: 'ok', items: [1, 2] });
  assert.throws(() => decodeWith(schema, bytes.subarray(0, 5), 'probe'), /probe\.name needs 2 bytes, 1 remain/);
  const bad = Buffer.from(bytes);
  bad[4] = 0xff; // not UTF-8
  assert.throws(() => decodeWith(schema, bad, 'other'), /other\.name is not valid UTF-8/);
  assert.throws(() => decodeWith(schema, Buffer.concat([bytes, Buffer.from([0])]), 'probe'), /probe has 1 unexpected trailing bytes/);
});

test('decoding into views shares the payload; the default decodes copies', () => {
  const schema = { k: 'bytes' } as const;
  const payload = Buffer.from(encodeWith(schema, { k: Buffer.from('abc') }));
  const copy = decodeWith(schema, payload, 'm').k;
  const view = decodeWith(schema, payload, 'm', { views: true }).k;
  payload[4] = 0x78;
  assert.equal(Buffer.from(copy).toString(), 'abc');
  assert.equal(Buffer.from(view).toString(), 'xbc');
});
