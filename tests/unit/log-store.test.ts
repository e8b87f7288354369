// The persistence log on the simulated disk, seeded: random records are appended (durable or not)
// in turns, segments roll, fsyncs complete later; then the machine crashes (unsynced bytes partly
// lost, the last write maybe torn) or the process is killed, and the log is opened again. Checked
// on every seed: what comes back is exactly a prefix of what was appended, in order, byte for
// byte; it holds every record acknowledged as durable (machine crash) or as written (process
// crash); sequence numbers continue after the highest one read. Then the faults of the Disk: a
// full disk fails the batch's acks and leaves the log usable; a failing fsync fails the acks
// waiting for it; a second opener of a locked directory is refused.
import test from 'node:test';
import assert from 'node:assert/strict';
import { LogStore, type NewRecord } from '../../src/persistence/log-store.js';
import type { LogRecord } from '../../src/persistence/log-record.js';
import { Logger } from '../../src/util/logger.js';
import { SeededRandom } from '../../src/util/prng.js';
import { GridError } from '../../src/util/errors.js';
import { SimDisk } from '../harness/sim-disk.js';
import { sampleRecords } from '../harness/log-samples.js';

const lines: string[] = [];
const log = new Logger('FINE', 'text', { write: (l) => lines.push(l) }).component('persistence');

function strip(r: LogRecord): string {
  const { seq: _seq, ...rest } = r;
  return JSON.stringify(Object.entries(rest).map(([k, v]) => [k, v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v]));
}

function openLog(disk: SimDisk, segmentBytes: number, owner = 'member'): { store: LogStore; records: LogRecord[] } {
  const records: LogRecord[] = [];
  const { store } = LogStore.open({ disk, dir: 'base/m1', owner, log, segmentBytes }, (r) => records.push(r));
  return { store, records };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('after a crash the log holds a prefix of what was appended, with everything acknowledged', async () => {
  let lossy = 0;
  const tornBefore = lines.filter((l) => l.includes('torn last write')).length;
  for (let seed = 1; seed <= 150; seed++) {
    const rnd = new SeededRandom(seed);
    const disk = new SimDisk({ seed });
    const segmentBytes = 512 + rnd.nextInt(4096);
    const appended: string[] = [];
    let acked = 0; // every record up to this index is acknowledged as asked
    const ackedFlags: boolean[] = [];
    let { store } = openLog(disk, segmentBytes);
    const machineCrash = rnd.nextInt(3) !== 0;
    const durableShare = rnd.nextInt(3); // 0: never, 1: some, 2: always
    const turns = 1 + rnd.nextInt(30);
    for (let t = 0; t < turns; t++) {
      for (const r of sampleRecords(rnd, 1 + rnd.nextInt(12))) {
        const { seq: _seq, ...rest } = r;
        const durable = durableShare === 2 || (durableShare === 1 && rnd.nextInt(2) === 0);
        const index = appended.length;
        appended.push(strip(r));
        ackedFlags.push(false);
        // A machine crash keeps only what was synced: a record counts as safe when acked durable,
        // or when a later durable record was acked (one fsync covers everything before it).
        store.append(rest as NewRecord, machineCrash ? durable : false, (e) => {
          assert.equal(e, null);
          ackedFlags[index] = durable || !machineCrash;
        });
      }
      store.flush();
      if (rnd.nextInt(2) === 0) await settle();
    }
    if (rnd.nextInt(2) === 0) await settle();
    for (let i = ackedFlags.length - 1; i >= 0; i--) {
      if (ackedFlags[i]) {
        acked = i + 1;
        break;
      }
    }
    if (machineCrash) disk.crash({ tearLastWrite: rnd.nextInt(2) === 0 });
    else disk.processCrash();
    const again = openLog(disk, segmentBytes);
    const got = again.records.map(strip);
    assert.ok(got.length >= acked, `seed ${seed}: ${got.length} records back, ${acked} acknowledged`);
    assert.deepEqual(got, appended.slice(0, got.length), `seed ${seed}: a prefix, byte for byte`);
    if (!machineCrash) assert.equal(got.length, appended.length, `seed ${seed}: a killed process loses nothing written`);
    if (got.length < appended.length) lossy++;
    // Sequence numbers continue.
    const seqs = again.records.map((r) => r.seq);
    assert.deepEqual(seqs, seqs.map((_, i) => i + 1));
    assert.equal(again.store.nextSequence, got.length + 1);
    again.store.close();
    store = again.store;
  }
  // The faults really happened: some crashes lost unsynced records, some tore a write.
  const torn = lines.filter((l) => l.includes('torn last write')).length - tornBefore;
  assert.ok(lossy >= 10 && torn >= 10, `${lossy} seeds lost unsynced records, ${torn} had a torn tail`);
});

test('segments roll at their size and are read back in order', () => {
  const disk = new SimDisk({ seed: 1 });
  const { store } = openLog(disk, 1024);
  const all = sampleRecords(new SeededRandom(2), 200);
  for (const r of all) {
    const { seq: _seq, ...rest } = r;
    store.append(rest as NewRecord, false);
    store.flush();
  }
  const sealed = store.figures().filter((s) => s.sealed).length;
  assert.ok(sealed >= 5, `${sealed} sealed segments`);
  store.close();
  const again = openLog(disk, 1024);
  assert.deepEqual(again.records.map(strip), all.map(strip));
  assert.equal(again.store.figures().filter((s) => s.sealed).length, sealed);
  again.store.close();
});

test('a full disk fails the batch and leaves the log as it was; an fsync failure fails its acks', async () => {
  const disk = new SimDisk({ seed: 4 });
  const { store } = openLog(disk, 1 << 20);
  const [a, b] = sampleRecords(new SeededRandom(5), 2).map((r) => {
    const { seq: _seq, ...rest } = r;
    return rest as NewRecord;
  });
  const results: (string | null)[] = [];
  store.append(a as NewRecord, false, (e) => results.push(e === null ? null : (e as GridError).code));
  store.flush();
  disk.capacityBytes = disk.usedBytes() + 5;
  store.append(b as NewRecord, false, (e) => results.push(e === null ? null : (e as GridError).code));
  store.flush();
  assert.deepEqual(results, [null, 'ERR_PERSISTENCE_IO']);
  disk.capacityBytes = Number.MAX_SAFE_INTEGER;
  disk.failSyncs = 1;
  store.append(b as NewRecord, true, (e) => results.push(e === null ? null : (e as GridError).code));
  store.flush();
  await settle();
  assert.deepEqual(results, [null, 'ERR_PERSISTENCE_IO', 'ERR_PERSISTENCE_IO']);
  store.append(b as NewRecord, true, (e) => results.push(e === null ? null : (e as GridError).code));
  store.flush();
  await settle();
  assert.equal(results[3], null);
  store.close();
  // The failed batch left nothing behind: three records come back (a, b, b), in order.
  const again = openLog(disk, 1 << 20);
  assert.equal(again.records.length, 3);
  assert.deepEqual(again.records.map((r) => r.seq), [1, 3, 4]);
  again.store.close();
});

test('a locked directory is refused to a second opener; a corrupt sealed segment names file and offset', () => {
  const disk = new SimDisk({ seed: 6 });
  const first = openLog(disk, 1024, 'one');
  assert.throws(() => openLog(disk, 1024, 'two'), (e: unknown) => e instanceof GridError && e.code === 'ERR_PERSISTENCE_LOCKED');
  for (const r of sampleRecords(new SeededRandom(7), 100)) {
    const { seq: _seq, ...rest } = r;
    first.store.append(rest as NewRecord, false);
    first.store.flush();
  }
  first.store.close();
  const sealed = first.store.figures().find((s) => s.sealed);
  assert.ok(sealed !== undefined);
  disk.flipBit(`base/m1/${sealed.name}`, 40, 3);
  assert.throws(() => openLog(disk, 1024), (e: unknown) => e instanceof GridError && e.code === 'ERR_PERSISTENCE_CORRUPT' && e.message.includes(sealed.name) && /offset \d+/.test(e.message));
  // The refused open released its lock.
  disk.flipBit(`base/m1/${sealed.name}`, 40, 3);
  openLog(disk, 1024).store.close();
});

test('openAsync reads the same records as open, giving the event loop a turn after each segment', async () => {
  const disk = new SimDisk({ seed: 8 });
  const { store } = openLog(disk, 1024);
  const all = sampleRecords(new SeededRandom(9), 150);
  for (const r of all) {
    const { seq: _seq, ...rest } = r;
    store.append(rest as NewRecord, false);
    store.flush();
  }
  store.close();
  const segments = store.figures().length;
  const records: LogRecord[] = [];
  let turns = 0;
  const { store: again } = await LogStore.openAsync({ disk, dir: 'base/m1', owner: 'async', log, segmentBytes: 1024 }, (r) => records.push(r), async () => {
    turns++;
    await settle();
  });
  assert.deepEqual(records.map(strip), all.map(strip));
  assert.ok(turns >= segments - 1 && turns >= 5, `${turns} turns for ${segments} segments`);
  again.close();
});
