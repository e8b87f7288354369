// Random persistence-log records of every type, and their encoding, for the log's unit and fuzz tests.
import { RecordBatch, type LogRecord } from '../../src/persistence/log-record.js';
import type { SeededRandom } from '../../src/util/prng.js';

/** `count` records of random types and contents, with sequence numbers from `firstSeq` up. */
export function sampleRecords(rnd: SeededRandom, count: number, firstSeq = 1): LogRecord[] {
  const out: LogRecord[] = [];
  const bytes = (n: number): Uint8Array => Uint8Array.from({ length: n }, () => rnd.nextInt(256));
  const name = (): string => ['orders', 'jobs', 'käse', 'a/b', ''][rnd.nextInt(5)] as string;
  for (let i = 0; i < count; i++) {
    const c = { partitionId: rnd.nextInt(271), seq: firstSeq + i, partitionVersion: rnd.nextInt(1_000_000) };
    switch (rnd.nextInt(7)) {
      case 0:
        out.push({ type: 'mapPut', ...c, name: name(), key: bytes(1 + rnd.nextInt(20)), value: bytes(rnd.nextInt(300)), contentType: rnd.nextInt(3) === 0 ? null : 'application/json', creationTimeMs: 1_700_000_000_000 + rnd.nextInt(1000), updateTimeMs: 1_700_000_001_000, lastAccessTimeMs: 1_700_000_002_000, expirationTimeMs: rnd.nextInt(2) === 0 ? 0 : 1_800_000_000_000, version: rnd.nextInt(100), hits: rnd.nextInt(1000) });
        {
          // Every fourth put (by its hits, no further draw) carries an entry's own expiry.
          const put = out[out.length - 1] as Extract<LogRecord, { type: 'mapPut' }>;
          if (put.hits % 4 === 0) Object.assign(put, { ttlMs: put.hits * 10, maxIdleMs: put.hits % 8 === 0 ? -1 : 0 });
        }
        break;
      case 1:
        out.push({ type: 'mapRemove', ...c, name: name(), key: bytes(1 + rnd.nextInt(20)) });
        break;
      case 2:
        out.push({ type: 'mapClear', ...c, name: name() });
        break;
      case 3:
        out.push({ type: 'queueAdd', ...c, name: name(), itemId: rnd.nextInt(1 << 30) * 1000, value: bytes(rnd.nextInt(200)), contentType: rnd.nextInt(2) === 0 ? null : 'text/plain' });
        break;
      case 4:
        out.push({ type: 'queueRemove', ...c, name: name(), itemId: rnd.nextInt(1 << 30) });
        break;
      case 5:
        out.push({ type: 'queueClear', ...c, name: name() });
        break;
      default:
        out.push({ type: 'partitionDrop', ...c });
    }
  }
  return out;
}

/** The records encoded back to back, as the log writes them. */
export function encodeAll(records: readonly LogRecord[]): Buffer {
  const b = new RecordBatch(16);
  for (const r of records) b.add(r);
  return Buffer.from(b.take());
}

