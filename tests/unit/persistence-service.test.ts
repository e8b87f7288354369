// The replica store's mutation stream into the log and back (src/persistence/persistence-service.ts),
// on the simulated disk, seeded: random map and queue operations (puts, put-if-absent, removes,
// clears, merges, offers, polls), partition snapshots imported and partitions dropped, then the log
// is read into an empty store. Checked: the persistent map and queue hold exactly what the first
// store held (hits and access times as of the last write: reads are not logged), and the
// partitions' data versions too; the map without data-persistence comes back
// empty; an entry that expired before the member stopped stays gone, and time-to-live counts again
// from the load. The ticket: an operation on a persistent map is answered only after its records
// were written (fsync false) or synced (fsync true); an operation on a non-persistent map has none.
import test from 'node:test';
import assert from 'node:assert/strict';
import { ReplicaStore, OP } from '../../src/data/replica-store.js';
import { LogStore } from '../../src/persistence/log-store.js';
import { applyRecord, PersistenceService, type LoadTally } from '../../src/persistence/persistence-service.js';
import { encodeMapMerge } from '../../src/data/merge-batch.js';
import { partitionIdOfKey } from '../../src/partition/partition-id.js';
import { Logger } from '../../src/util/logger.js';
import { SeededRandom } from '../../src/util/prng.js';
import { SimDisk } from '../harness/sim-disk.js';
import { testStore } from '../harness/store.js';

const PARTITIONS = 31;
const log = new Logger('SEVERE', 'text', { write: () => {} }).component('persistence');
const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');

function newStore(fsync: boolean, ttlSeconds = 0): ReplicaStore {
  return testStore({
    partitionCount: PARTITIONS,
    map: (name) => ({ timeToLiveSeconds: name === 'ttl' ? ttlSeconds : 0, dataPersistence: { enabled: name !== 'cache', fsync } }),
    queue: () => ({ dataPersistence: { enabled: true, fsync } }),
  });
}

interface Rig {
  store: ReplicaStore;
  logStore: LogStore;
  service: PersistenceService;
  deferred: (() => void)[];
  clock: { now: number };
}

function rig(disk: SimDisk, fsync: boolean, ttlSeconds = 0, now = 1_700_000_000_000): Rig {
  const store = newStore(fsync, ttlSeconds);
  const { store: logStore } = LogStore.open({ disk, dir: 'p/m', owner: 'm', log }, () => {});
  const deferred: (() => void)[] = [];
  const clock = { now };
  const service = new PersistenceService({
    store,
    log: logStore,
    mapDurability: (name) => (name === 'cache' ? null : { fsync }),
    queueDurability: () => ({ fsync }),
    defer: (fn) => deferred.push(fn),
    nowMs: () => clock.now,
  });
  service.attach();
  return { store, logStore, service, deferred, clock };
}

function reload(disk: SimDisk, fsync: boolean, expiredBeforeMs: number, nowMs: number, ttlSeconds = 0): { store: ReplicaStore; tally: LoadTally } {
  const store = newStore(fsync, ttlSeconds);
  const tally: LoadTally = { records: 0, entriesSkippedExpired: 0 };
  const { store: logStore } = LogStore.open({ disk, dir: 'p/m', owner: 'm2', log }, (r) => applyRecord(store, r, expiredBeforeMs, nowMs, tally));
  logStore.close();
  return { store, tally };
}

function dump(store: ReplicaStore, now: number, withVersions: boolean): unknown {
  const out: unknown[] = [];
  for (let p = 0; p < PARTITIONS; p++) {
    const snap = store.exportPartition(p, now);
    const entries = snap.entries.filter((e) => e.map !== 'cache').map((e) => `${e.map}/${utf8('').toString()}${Buffer.from(e.key).toString()}=${Buffer.from(e.value).toString()}|${e.contentType}|v${e.version}|c${e.creationTimeMs}`).sort();
    const queues = snap.queues.map((q) => `${q.name}:${q.items.map((i) => `${i.id}=${Buffer.from(i.value).toString()}`).join(',')}`);
    out.push({ p, entries, queues, ...(withVersions ? { version: snap.version } : {}) });
  }
  return out;
}

function flushAll(r: Rig): void {
  for (const fn of r.deferred.splice(0)) fn();
}

test('a store written through random operations comes back from its log exactly', () => {
  for (let seed = 1; seed <= 30; seed++) {
    const rnd = new SeededRandom(seed);
    const disk = new SimDisk({ seed });
    const r = rig(disk, false);
    const now = r.clock.now;
    const maps = ['orders', 'cache', 'orders'];
    for (let i = 0; i < 600; i++) {
      const map = maps[rnd.nextInt(maps.length)] as string;
      const key = utf8(`k${rnd.nextInt(60)}`);
      const p = partitionIdOfKey(key, PARTITIONS);
      const op = rnd.nextInt(20);
      const base = { name: map, key, value: utf8(`v${i}`), contentType: rnd.nextInt(2) === 0 ? null : 'text/plain', timeoutMs: 0 };
      if (op < 8) r.store.runOwnerOp(p, { ...base, code: OP.MAP_PUT }, now + i);
      else if (op < 9) r.store.runOwnerOp(p, { ...base, code: OP.MAP_PUT_IF_ABSENT }, now + i);
      else if (op < 12) r.store.runOwnerOp(p, { ...base, code: OP.MAP_REMOVE }, now + i);
      else if (op < 13) r.store.runOwnerOp(p, { ...base, code: OP.MAP_CLEAR_PARTITION }, now + i);
      else if (op < 14) {
        const entries = [0, 1, 2].map((j) => ({ key: utf8(`m${i}-${j}`), value: utf8(`merged${i}`), contentType: null, creationTimeMs: now, updateTimeMs: now, lastAccessTimeMs: now, expirationTimeMs: Infinity, hits: 3, version: 5, ttlMs: -1, maxIdleMs: -1 })).filter((e) => partitionIdOfKey(e.key, PARTITIONS) === p);
        if (entries.length > 0) r.store.runOwnerOp(p, { code: OP.MAP_MERGE, name: map, key: Buffer.alloc(0), value: encodeMapMerge({ policy: 'PassThroughMergePolicy', entries }), contentType: null, timeoutMs: 0 }, now + i);
      } else if (op < 17) {
        const q = `jobs${rnd.nextInt(3)}`;
        r.store.runOwnerOp(r.store.queuePartition(q), { code: OP.QUEUE_OFFER, name: q, key: Buffer.alloc(0), value: utf8(`item${i}`), contentType: null, timeoutMs: 0 }, now + i);
      } else if (op < 19) {
        const q = `jobs${rnd.nextInt(3)}`;
        r.store.runOwnerOp(r.store.queuePartition(q), { code: OP.QUEUE_POLL, name: q, key: Buffer.alloc(0), value: Buffer.alloc(0), contentType: null, timeoutMs: 0 }, now + i);
      } else if (rnd.nextInt(2) === 0) {
        // A migration brings a partition in: its snapshot replaces what was there.
        const from = r.store.exportPartition(p, now + i);
        r.store.importPartition(p, from.version + 100, from.entries.slice(0, Math.max(0, from.entries.length - 1)), from.queues, now + i);
      } else {
        r.store.dropPartition(p);
      }
      r.service.takeTicket();
      if (rnd.nextInt(5) === 0) flushAll(r);
    }
    flushAll(r);
    const before = dump(r.store, now + 1000, false);
    r.logStore.close();
    const back = reload(disk, false, now, now + 1000);
    assert.deepEqual(dump(back.store, now + 1000, false), before, `seed ${seed}`);
    assert.ok(back.tally.records > 100);
  }
});

test('data versions come back when every structure is persistent', () => {
  const disk = new SimDisk({ seed: 2 });
  const r = rig(disk, false);
  const rnd = new SeededRandom(3);
  for (let i = 0; i < 300; i++) {
    const key = utf8(`k${rnd.nextInt(40)}`);
    const p = partitionIdOfKey(key, PARTITIONS);
    r.store.runOwnerOp(p, { code: rnd.nextInt(4) === 0 ? OP.MAP_REMOVE : OP.MAP_PUT, name: 'orders', key, value: utf8(`v${i}`), contentType: null, timeoutMs: 0 }, r.clock.now);
  }
  flushAll(r);
  const before = dump(r.store, r.clock.now, true);
  r.logStore.close();
  assert.deepEqual(dump(reload(disk, false, 0, r.clock.now).store, r.clock.now, true), before);
});

test('expired before the stop stays gone; time-to-live counts again from the load', () => {
  const disk = new SimDisk({ seed: 4 });
  const t0 = 1_700_000_000_000;
  const r = rig(disk, false, 10, t0);
  const put = (key: string, at: number): void => {
    const k = utf8(key);
    r.store.runOwnerOp(partitionIdOfKey(k, PARTITIONS), { code: OP.MAP_PUT, name: 'ttl', key: k, value: utf8('x'), contentType: null, timeoutMs: 0 }, at);
  };
  put('early', t0); // expires at t0 + 10 s
  put('late', t0 + 8000); // expires at t0 + 18 s
  flushAll(r);
  r.logStore.close();
  // The member was last alive at t0 + 12 s and loads at t0 + 60 s.
  const { store, tally } = reload(disk, false, t0 + 12_000, t0 + 60_000, 10);
  assert.equal(tally.entriesSkippedExpired, 1);
  const get = (key: string, at: number): boolean => store.maps.get('ttl', utf8(key), partitionIdOfKey(utf8(key), PARTITIONS), at) !== null;
  assert.equal(get('early', t0 + 60_000), false);
  assert.equal(get('late', t0 + 60_000), true, 'not expired at the stop: back, counting from the load');
  assert.equal(get('late', t0 + 69_000), true);
  assert.equal(get('late', t0 + 71_000), false);
});

test('the ticket passes when the records are written (fsync false) or synced (fsync true)', async () => {
  for (const fsync of [false, true]) {
    const disk = new SimDisk({ seed: 5 });
    const r = rig(disk, fsync);
    const k = utf8('a');
    const p = partitionIdOfKey(k, PARTITIONS);
    r.store.runOwnerOp(p, { code: OP.MAP_PUT, name: 'cache', key: k, value: utf8('1'), contentType: null, timeoutMs: 0 }, r.clock.now);
    assert.equal(r.service.takeTicket(), 0, 'nothing persistent: no ticket');
    r.store.runOwnerOp(p, { code: OP.MAP_PUT, name: 'orders', key: k, value: utf8('1'), contentType: null, timeoutMs: 0 }, r.clock.now);
    const ticket = r.service.takeTicket();
    assert.ok(ticket !== 0);
    let passed: Error | null | undefined;
    r.service.whenDone(ticket, (e) => (passed = e));
    assert.equal(passed, undefined, 'not before the flush');
    const syncsBefore = disk.syncs;
    flushAll(r);
    if (!fsync) assert.equal(passed, null, 'written: passed');
    else {
      assert.equal(passed, undefined, 'written but not synced yet');
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(passed, null);
      assert.equal(disk.syncs, syncsBefore + 1);
    }
    r.logStore.close();
  }
});
