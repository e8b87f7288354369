// Seeded fuzzing of the persistence log reader: random streams of records are damaged (cut at a
// random point, a random run of bytes overwritten with junk or zeros, random bits flipped) and
// scanned as an open and as a sealed segment. Whatever happens, every record handed out is the
// original record written at that offset (never a wrong or shifted one); the scan either ends
// cleanly, drops a torn tail, or throws ERR_PERSISTENCE_CORRUPT naming the file and an offset at or
// before the first damaged byte.
import assert from 'node:assert/strict';
import { fuzz } from '../harness/fuzz.js';
import { scanSegment } from '../../src/persistence/segment-scan.js';
import { GridError } from '../../src/util/errors.js';
import type { LogRecord } from '../../src/persistence/log-record.js';
import { encodeAll, sampleRecords } from '../harness/log-samples.js';

const f = fuzz(20261126, 400);

function key(r: LogRecord): string {
  return JSON.stringify(Object.entries(r).map(([k, v]) => [k, v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v]));
}

f.case('a damaged segment never yields a wrong record', (rnd) => {
  for (let i = 0; i < f.iterations; i++) {
    const records = sampleRecords(rnd, 1 + rnd.nextInt(30), 1 + rnd.nextInt(1000));
    const whole = encodeAll(records);
    const byOffset = new Map<number, string>();
    let o = 0;
    for (const r of records) {
      byOffset.set(o, key(r));
      o += encodeAll([r]).length;
    }
    let bytes = Buffer.from(whole);
    let firstDamage = bytes.length;
    const mode = rnd.nextInt(4);
    if (mode === 0 || mode === 3) {
      const cut = rnd.nextInt(bytes.length + 1);
      bytes = bytes.subarray(0, cut);
      firstDamage = Math.min(firstDamage, cut);
    }
    if (mode === 1 || mode === 3) {
      if (bytes.length > 0) {
        const at = rnd.nextInt(bytes.length);
        const len = 1 + rnd.nextInt(Math.min(64, bytes.length - at));
        const zeros = rnd.nextInt(2) === 0;
        for (let k = at; k < at + len; k++) {
          const v = zeros ? 0 : rnd.nextInt(256);
          if (bytes[k] !== v) firstDamage = Math.min(firstDamage, k);
          bytes[k] = v;
        }
      }
    }
    if (mode === 2) {
      for (let n = 1 + rnd.nextInt(3); n > 0 && bytes.length > 0; n--) {
        const at = rnd.nextInt(bytes.length);
        bytes[at] = (bytes[at] as number) ^ (1 << rnd.nextInt(8));
        firstDamage = Math.min(firstDamage, at);
      }
    }
    for (const open of [true, false]) {
      const src = { size: bytes.length, readAt: (off: number, n: number) => bytes.subarray(off, Math.min(bytes.length, off + n)) };
      try {
        scanSegment(src, 'seg-f.log', open, (r, offset) => {
          assert.equal(key(r), byOffset.get(offset), `record at ${offset} is the one written there (iteration ${i})`);
        });
      } catch (e) {
        if (!(e instanceof GridError)) throw e;
        assert.equal(e.code, 'ERR_PERSISTENCE_CORRUPT');
        const m = /at offset (\d+)/.exec(e.message);
        assert.ok(m !== null && e.message.startsWith('seg-f.log'), e.message);
        assert.ok(Number(m[1]) <= firstDamage, `reported offset ${m[1]} is not after the first damaged byte ${firstDamage}`);
      }
    }
  }
});
