// Compaction of the persistence log (src/persistence/compactor.ts) on the simulated disk, seeded:
// a store written through overwrites, removes, clears, queue offers and polls, partition drops;
// then compaction cycles run to their end. Checked: the log shrinks; it reads back into exactly
// the store it was written from; and a process killed after any number of compaction steps (any
// point between writing the output, renaming it and deleting the inputs) still reads back into the
// same store. A backup in progress holds deletions back.
import test from 'node:test';
import assert from 'node:assert/strict';
import { ReplicaStore, OP } from '../../src/data/replica-store.js';
import { LogStore } from '../../src/persistence/log-store.js';
import { applyRecord, PersistenceService, recordIsLive, type LoadTally } from '../../src/persistence/persistence-service.js';
import { Compactor } from '../../src/persistence/compactor.js';
import { partitionIdOfKey } from '../../src/partition/partition-id.js';
import { Logger } from '../../src/util/logger.js';
import { SeededRandom } from '../../src/util/prng.js';
import { SimDisk } from '../harness/sim-disk.js';
import { testStore } from '../harness/store.js';

const PARTITIONS = 13;
const NOW = 1_700_000_000_000;
const log = new Logger('SEVERE', 'text', { write: () => {} }).component('persistence');
const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');
const POLICY = { liveShareMax: 0.5, outputBytesMax: 16 * 1024 };

function newStore(): ReplicaStore {
  return testStore({ partitionCount: PARTITIONS, map: () => ({ dataPersistence: { enabled: true, fsync: false } }), queue: () => ({ dataPersistence: { enabled: true, fsync: false } }) });
}

function openLog(disk: SimDisk, store: ReplicaStore | null): LogStore {
  const tally: LoadTally = { records: 0, entriesSkippedExpired: 0 };
  return LogStore.open({ disk, dir: 'd', owner: 'o', log, segmentBytes: 2048 }, (r) => {
    if (store !== null) applyRecord(store, r, NOW, NOW, tally);
  }).store;
}

function dump(store: ReplicaStore): string {
  const out: string[] = [];
  for (let p = 0; p < PARTITIONS; p++) {
    const s = store.exportPartition(p, NOW);
    for (const e of s.entries) out.push(`${p} ${e.map}/${Buffer.from(e.key).toString()}=${Buffer.from(e.value).toString()} v${e.version}`);
    for (const q of s.queues) out.push(`${p} ${q.name}: ${q.items.map((i) => `${i.id}=${Buffer.from(i.value).toString()}`).join(',')}`);
  }
  return out.sort().join('\n');
}

/** Writes a random history; returns the store and its log (closed). */
function write(seed: number, disk: SimDisk): ReplicaStore {
  const rnd = new SeededRandom(seed);
  const store = newStore();
  const logStore = openLog(disk, null);
  const service = new PersistenceService({ store, log: logStore, mapDurability: () => ({ fsync: false }), queueDurability: () => ({ fsync: false }), defer: () => {}, nowMs: () => NOW });
  service.attach();
  for (let i = 0; i < 1500; i++) {
    const key = utf8(`k${rnd.nextInt(30)}`);
    const p = partitionIdOfKey(key, PARTITIONS);
    const op = rnd.nextInt(40);
    const base = { name: rnd.nextInt(4) === 0 ? 'other' : 'm', key, value: utf8(`value-${i}-${'x'.repeat(rnd.nextInt(40))}`), contentType: null, timeoutMs: 0 };
    if (op < 28) store.runOwnerOp(p, { ...base, code: OP.MAP_PUT }, NOW);
    else if (op < 33) store.runOwnerOp(p, { ...base, code: OP.MAP_REMOVE }, NOW);
    else if (op < 34) store.runOwnerOp(p, { ...base, code: OP.MAP_CLEAR_PARTITION }, NOW);
    else if (op < 37) store.runOwnerOp(store.queuePartition('q'), { ...base, name: 'q', code: OP.QUEUE_OFFER }, NOW);
    else if (op < 39) store.runOwnerOp(store.queuePartition('q'), { ...base, name: 'q', code: OP.QUEUE_POLL }, NOW);
    else store.dropPartition(p);
    service.takeTicket();
    if (rnd.nextInt(3) === 0) logStore.flush();
  }
  logStore.close();
  return store;
}

function compactor(logStore: LogStore, disk: SimDisk, store: ReplicaStore, paused: () => boolean = () => false): Compactor {
  return new Compactor(logStore, { disk, log, policy: POLICY, paused, isLive: (r) => recordIsLive(store, r, NOW) });
}

test('compaction shrinks the log, and the log still reads back into the same store', () => {
  for (let seed = 1; seed <= 20; seed++) {
    const disk = new SimDisk({ seed });
    const store = write(seed, disk);
    const expected = dump(store);
    const logStore = openLog(disk, null);
    const before = logStore.totalBytes;
    const c = compactor(logStore, disk, store);
    for (let cycle = 0; cycle < 3; cycle++) {
      c.start();
      let steps = 0;
      while (c.step()) assert.ok(++steps < 100_000, 'a cycle ends');
    }
    const after = logStore.totalBytes;
    assert.ok(after < before / 2, `seed ${seed}: ${before} → ${after} bytes`);
    assert.ok(c.counters.runsCompacted > 0);
    logStore.close();
    const back = newStore();
    openLog(disk, back).close();
    assert.equal(dump(back), expected, `seed ${seed}`);
  }
});

test('a process killed after any compaction step leaves a log that reads back into the same store', () => {
  for (let seed = 30; seed <= 34; seed++) {
    const base = new SimDisk({ seed });
    const store = write(seed, base);
    const expected = dump(store);
    // How many steps a whole cycle takes on this log.
    const probe = openLog(base, null);
    const c0 = compactor(probe, base, store);
    c0.start();
    let total = 0;
    while (c0.step()) total++;
    probe.close();
    assert.ok(total > 5);
    for (let k = 0; k <= total; k++) {
      const disk = new SimDisk({ seed });
      const s2 = write(seed, disk);
      const logStore = openLog(disk, null);
      const c = compactor(logStore, disk, s2);
      c.start();
      for (let i = 0; i < k && c.step(); i++);
      disk.processCrash();
      const back = newStore();
      openLog(disk, back).close();
      assert.equal(dump(back), expected, `seed ${seed}, killed after ${k} of ${total} steps`);
    }
  }
});

test('a backup in progress holds the deletion of compacted inputs back', () => {
  const disk = new SimDisk({ seed: 7 });
  const store = write(7, disk);
  const logStore = openLog(disk, null);
  let backup = true;
  const c = compactor(logStore, disk, store, () => backup);
  const files = (): string[] => disk.list('d').filter((n) => n.endsWith('.log'));
  const before = files();
  c.start();
  for (let i = 0; i < 10_000 && c.step(); i++) {
    for (const f of before) assert.ok(disk.exists(`d/${f}`), `${f} is still there during the backup`);
    if (i > 2000) break;
  }
  backup = false;
  while (c.step());
  assert.ok(files().length < before.length);
  logStore.close();
});
