// CP commands in Raft entries: the binary layout of an Envelope (structures.ts). Codes are
// append-only; decoding is bounds-checked like every wire format (util/bytes.ts), so an entry that
// is malformed (a bug, or a disk that lies) fails loudly with the field named.
//
// Layout (big-endian; str = u32 length + UTF-8; bytes = u32 length + bytes; long = str decimal):
//   str invocation | f64 nowMs | u8 kind | body
//   1 long:        u8 op (1 set, 2 getAndSet, 3 addAndGet, 4 getAndAdd, 5 compareAndSet) | str name | long a | long b
//   2 ref:         u8 op (1 set, 2 getAndSet, 3 compareAndSet) | str name | ref value | ref expected | f64 ifIndex
//                  ref = u8 present | (present) bytes value | u8 hasType | (hasType) str contentType
//   3 latch:       u8 op (1 trySetCount, 2 countDown, 3 await) | str name | f64 count / round / timeoutMs
//   4 destroy:     u8 structure (1 long, 2 ref, 3 latch) | str name
//   5 expireWaits: u32 n | n × str invocation
import { ByteReader, ByteWriter } from '../util/bytes.js';
import type { CpCommand, Envelope, LongOp, RefOp, RefValue, Structure } from './structures.js';

export const NAME_BYTES_MAX = 1024;
const INVOCATION_BYTES_MAX = 128;
const CONTENT_TYPE_BYTES_MAX = 256;
const EXPIRE_MAX = 100_000;

const LONG_OPS: readonly LongOp[] = ['set', 'getAndSet', 'addAndGet', 'getAndAdd', 'compareAndSet'];
const REF_OPS: readonly RefOp[] = ['set', 'getAndSet', 'compareAndSet'];
const LATCH_OPS = ['trySetCount', 'countDown', 'await'] as const;
const STRUCTURES: readonly Structure[] = ['long', 'ref', 'latch'];

export function encodeEnvelope(e: Envelope, valueBytesMax: number): Buffer {
  const w = new ByteWriter(64);
  w.string(e.invocation, INVOCATION_BYTES_MAX).f64(e.nowMs);
  const c = e.command;
  switch (c.kind) {
    case 'long':
      w.u8(1).u8(LONG_OPS.indexOf(c.op) + 1).string(c.name, NAME_BYTES_MAX).string(c.a.toString(), 24).string(c.b.toString(), 24);
      break;
    case 'ref':
      w.u8(2).u8(REF_OPS.indexOf(c.op) + 1).string(c.name, NAME_BYTES_MAX);
      writeRef(w, c.value, valueBytesMax);
      writeRef(w, c.expected, valueBytesMax);
      w.f64(c.ifIndex);
      break;
    case 'latch':
      w.u8(3).u8(LATCH_OPS.indexOf(c.op) + 1).string(c.name, NAME_BYTES_MAX).f64(c.op === 'trySetCount' ? c.count : c.op === 'countDown' ? c.round : c.timeoutMs);
      break;
    case 'destroy':
      w.u8(4).u8(STRUCTURES.indexOf(c.structure) + 1).string(c.name, NAME_BYTES_MAX);
      break;
    case 'expireWaits':
      w.u8(5).u32(c.invocations.length);
      for (const inv of c.invocations) w.string(inv, INVOCATION_BYTES_MAX);
      break;
  }
  return w.finish();
}

function writeRef(w: ByteWriter, v: RefValue | null, valueBytesMax: number): void {
  w.bool(v !== null);
  if (v === null) return;
  w.bytes(v.value, valueBytesMax).bool(v.contentType !== null);
  if (v.contentType !== null) w.string(v.contentType, CONTENT_TYPE_BYTES_MAX);
}

export function decodeEnvelope(buf: Uint8Array, valueBytesMax: number): Envelope {
  const r = new ByteReader(buf);
  const invocation = r.string(INVOCATION_BYTES_MAX, 'invocation');
  const nowMs = r.f64();
  const kind = r.u8();
  let command: CpCommand;
  switch (kind) {
    case 1: {
      const op = LONG_OPS[r.u8() - 1] ?? r.fail('unknown AtomicLong operation');
      command = { kind: 'long', op, name: r.string(NAME_BYTES_MAX, 'name'), a: readLong(r), b: readLong(r) };
      break;
    }
    case 2: {
      const op = REF_OPS[r.u8() - 1] ?? r.fail('unknown AtomicReference operation');
      const name = r.string(NAME_BYTES_MAX, 'name');
      const value = readRef(r, valueBytesMax);
      const expected = readRef(r, valueBytesMax);
      const ifIndex = r.f64();
      if (!Number.isSafeInteger(ifIndex) || ifIndex < -1) r.fail(`If-Match index ${ifIndex}`);
      command = { kind: 'ref', op, name, value, expected, ifIndex };
      break;
    }
    case 3: {
      const op = LATCH_OPS[r.u8() - 1] ?? r.fail('unknown CountDownLatch operation');
      const name = r.string(NAME_BYTES_MAX, 'name');
      const n = r.f64();
      if (!Number.isSafeInteger(n)) r.fail(`latch ${op} argument ${n}`);
      command = op === 'trySetCount' ? { kind: 'latch', op, name, count: n } : op === 'countDown' ? { kind: 'latch', op, name, round: n } : { kind: 'latch', op, name, timeoutMs: n };
      break;
    }
    case 4: {
      const structure = STRUCTURES[r.u8() - 1] ?? r.fail('unknown structure');
      command = { kind: 'destroy', structure, name: r.string(NAME_BYTES_MAX, 'name') };
      break;
    }
    case 5: {
      const n = r.count(EXPIRE_MAX, 'expired waits');
      const invocations: string[] = [];
      for (let i = 0; i < n; i++) invocations.push(r.string(INVOCATION_BYTES_MAX, 'invocation'));
      command = { kind: 'expireWaits', invocations };
      break;
    }
    default:
      return r.fail(`unknown CP command kind ${kind}`);
  }
  r.expectEnd('CP command');
  return { invocation, nowMs, command };
}

function readLong(r: ByteReader): bigint {
  const s = r.string(24, 'long');
  if (!/^(0|-?[1-9]\d{0,18})$/.test(s)) r.fail(`not a 64-bit integer: ${JSON.stringify(s)}`);
  const v = BigInt(s);
  if (v !== BigInt.asIntN(64, v)) r.fail(`outside 64 bits: ${s}`);
  return v;
}

function readRef(r: ByteReader, valueBytesMax: number): RefValue | null {
  if (!r.bool()) return null;
  const value = r.bytes(valueBytesMax, 'reference value');
  const contentType = r.bool() ? r.string(CONTENT_TYPE_BYTES_MAX, 'content type') : null;
  return { value, contentType };
}
