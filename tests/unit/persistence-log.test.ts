// The persistence log's pieces without I/O: CRC-32C against published check values, the record
// codec (every type round trips; every truncation is 'short'; a changed byte is never read as a
// record), segment scanning (torn tail dropped only in the open segment and only when nothing valid
// follows; a corrupt middle names the file and offset), the listing of a log directory, and the
// compaction policy.
import test from 'node:test';
import assert from 'node:assert/strict';
import { crc32c } from '../../src/persistence/crc32c.js';
import { readRecord, type LogRecord } from '../../src/persistence/log-record.js';
import { encodeAll, sampleRecords } from '../harness/log-samples.js';
import { scanSegment, type ByteSource } from '../../src/persistence/segment-scan.js';
import { openName, planListing, sealedName } from '../../src/persistence/segment-files.js';
import { fitsRun, shouldStartPass, worthRewriting, COMPACTION_POLICY_DEFAULT as P } from '../../src/persistence/compaction-plan.js';
import { GridError } from '../../src/util/errors.js';
import { SeededRandom } from '../../src/util/prng.js';

function source(bytes: Uint8Array): ByteSource {
  return { size: bytes.length, readAt: (o, n) => bytes.slice(o, Math.min(bytes.length, o + n)) };
}

function plain(r: LogRecord): unknown {
  return Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v]));
}

test('crc32c matches the published check values', () => {
  assert.equal(crc32c(Buffer.from('123456789')), 0xe3069283);
  assert.equal(crc32c(Buffer.alloc(32)), 0x8a9136aa);
  assert.equal(crc32c(Buffer.alloc(32, 0xff)), 0x62a8ab43);
  const ascending = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
  assert.equal(crc32c(ascending), 0x46dd794e);
  // Continued in pieces, at every split point, equals the whole.
  for (let i = 0; i <= 32; i++) assert.equal(crc32c(ascending, i, 32, crc32c(ascending, 0, i)), 0x46dd794e);
});

test('every record type round trips, with its exact length', () => {
  const rnd = new SeededRandom(7);
  const records = sampleRecords(rnd, 400);
  const bytes = encodeAll(records);
  let offset = 0;
  for (const r of records) {
    const got = readRecord(bytes, offset);
    assert.equal(got.kind, 'record');
    if (got.kind !== 'record') return;
    assert.deepEqual(plain(got.record), plain(r));
    offset += got.length;
  }
  assert.equal(offset, bytes.length);
});

test('a decoded record does not share memory with the bytes it came from', () => {
  const bytes = encodeAll([{ type: 'mapPut', partitionId: 1, seq: 1, partitionVersion: 1, name: 'm', key: Buffer.from('k'), value: Buffer.from('value'), contentType: null, creationTimeMs: 1, updateTimeMs: 1, lastAccessTimeMs: 1, expirationTimeMs: 0, version: 1, hits: 0 }]);
  const got = readRecord(bytes, 0);
  assert.equal(got.kind, 'record');
  bytes.fill(0);
  if (got.kind === 'record' && got.record.type === 'mapPut') assert.equal(Buffer.from(got.record.value).toString(), 'value');
});

test('a record cut at any point reads as short, never as a record', () => {
  const rnd = new SeededRandom(11);
  for (const r of sampleRecords(rnd, 60)) {
    const bytes = encodeAll([r]);
    for (let cut = 0; cut < bytes.length; cut++) {
      const got = readRecord(bytes.subarray(0, cut), 0);
      assert.equal(got.kind, 'short', `cut at ${cut} of ${bytes.length}`);
    }
  }
});

test('a record with any single bit flipped is refused or cut short, never read', () => {
  const rnd = new SeededRandom(13);
  for (const r of sampleRecords(rnd, 40)) {
    const bytes = encodeAll([r]);
    for (let i = 0; i < bytes.length; i++) {
      for (let bit = 0; bit < 8; bit++) {
        const copy = Buffer.from(bytes);
        copy[i] = (copy[i] as number) ^ (1 << bit);
        const got = readRecord(copy, 0);
        assert.notEqual(got.kind, 'record', `byte ${i} bit ${bit}`);
      }
    }
  }
});

test('scanning a sealed segment reads every record in order', () => {
  const records = sampleRecords(new SeededRandom(3), 300, 10);
  const bytes = encodeAll(records);
  const seen: number[] = [];
  const out = scanSegment(source(bytes), 'seg', false, (r) => seen.push(r.seq));
  assert.deepEqual(seen, records.map((r) => r.seq));
  assert.deepEqual(out, { records: 300, validBytes: bytes.length, lastSeq: 309, tornTail: null });
});

test('the open segment drops a torn tail (cut, zeros, junk) and keeps what came before', () => {
  const rnd = new SeededRandom(5);
  const records = sampleRecords(rnd, 50);
  const whole = encodeAll(records);
  const ends: number[] = [];
  let o = 0;
  for (const r of records) {
    o += encodeAll([r]).length;
    ends.push(o);
  }
  for (let cut = 1; cut < whole.length; cut += 7) {
    const kept = ends.filter((e) => e <= cut).length;
    const validBytes = kept === 0 ? 0 : (ends[kept - 1] as number);
    for (const fill of ['cut', 'zeros', 'junk'] as const) {
      const bytes = Buffer.from(whole);
      let tail = bytes.subarray(0, cut);
      let expected = kept;
      let expectedBytes = validBytes;
      if (fill !== 'cut') {
        // The last write's rest is there but unwritten: zeros, or junk, up to the next record end.
        const until = ends.find((e) => e > cut) ?? whole.length;
        const torn = Buffer.from(bytes.subarray(0, until));
        for (let i = cut; i < until; i++) torn[i] = fill === 'zeros' ? 0 : rnd.nextInt(256);
        tail = torn;
        // Zeros over bytes that were zero leave the record whole: then it is read, rightly.
        if (torn.equals(whole.subarray(0, until))) {
          expected = kept + 1;
          expectedBytes = until;
        }
      }
      let count = 0;
      const out = scanSegment(source(tail), 'seg', true, () => count++);
      assert.equal(count, expected, `${fill} at ${cut}`);
      assert.equal(out.validBytes, expectedBytes);
      assert.equal(out.tornTail === null, expectedBytes === tail.length);
    }
  }
});

test('a bad record in a sealed segment, or with a valid record after it, stops the scan naming file and offset', () => {
  const records = sampleRecords(new SeededRandom(9), 20);
  const bytes = encodeAll(records);
  const second = encodeAll([records[0] as LogRecord]).length;
  const broken = Buffer.from(bytes);
  broken[second + 10] = (broken[second + 10] as number) ^ 0x40;
  for (const open of [false, true]) {
    assert.throws(
      () => scanSegment(source(broken), 'seg-x.log', open, () => {}),
      (e: unknown) => e instanceof GridError && e.code === 'ERR_PERSISTENCE_CORRUPT' && e.message.includes('seg-x.log') && e.message.includes(`offset ${second}`),
    );
  }
  // A cut-short sealed segment is corrupt as well (it was synced whole).
  assert.throws(() => scanSegment(source(bytes.subarray(0, bytes.length - 3)), 'seg-y.log', false, () => {}), /seg-y\.log: corrupt log record at offset/);
});

test('sequence numbers must rise within a segment', () => {
  const a = sampleRecords(new SeededRandom(1), 2, 5);
  const bytes = encodeAll([a[1] as LogRecord, a[0] as LogRecord]);
  assert.throws(() => scanSegment(source(bytes), 's', false, () => {}), /sequence number 5 after 6/);
});

test('a directory listing: replay order, superseded compaction inputs, leftovers, foreign names', () => {
  const names = [sealedName(1, 100), sealedName(101, 200), sealedName(1, 250), sealedName(201, 250), sealedName(251, 300), openName(301), 'x.tmp', 'member.json', '.lock'];
  const l = planListing(names);
  assert.deepEqual(l.sealed.map((s) => s.name), [sealedName(1, 250), sealedName(251, 300)]);
  assert.deepEqual(l.open, { name: openName(301), first: 301 });
  assert.deepEqual([...l.obsolete].sort(), [sealedName(1, 100), sealedName(101, 200), sealedName(201, 250), 'x.tmp'].sort());
  assert.deepEqual(l.foreign, ['member.json', '.lock']);
  assert.throws(() => planListing([sealedName(1, 100), sealedName(50, 150)]), /overlap/);
  assert.throws(() => planListing([openName(1), openName(5)]), /more than one open segment/);
  assert.throws(() => planListing([sealedName(1, 100), openName(50)]), /starts inside/);
  assert.deepEqual(planListing([]), { sealed: [], open: null, obsolete: [], foreign: [] });
});

test('the compaction policy: which segments are worth a rewrite, how far a run goes, when a pass starts', () => {
  const MB = 1024 * 1024;
  assert.equal(worthRewriting(8 * MB, 3.9 * MB, P), true);
  assert.equal(worthRewriting(8 * MB, 4 * MB, P), false, 'half live is not worth it');
  assert.equal(worthRewriting(0, 0, P), false);
  assert.equal(fitsRun(0, 20 * MB, P), true, 'a run always takes its first segment');
  assert.equal(fitsRun(6 * MB, 2 * MB, P), true);
  assert.equal(fitsRun(6 * MB, 3 * MB, P), false);
  const base = { logBytes: 64 * MB, bytesSinceLastPass: 16 * MB, recordsWritten: 1000, entriesHeld: 100, minBytes: 32 * MB };
  assert.equal(shouldStartPass(base), true);
  assert.equal(shouldStartPass({ ...base, logBytes: 31 * MB }), false, 'a small log is left alone');
  assert.equal(shouldStartPass({ ...base, bytesSinceLastPass: 15 * MB }), false, 'too little written since the last pass');
  assert.equal(shouldStartPass({ ...base, entriesHeld: 600 }), false, 'most records are still live');
});
