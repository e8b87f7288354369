// CP persistence for one group (src/cp/raft-store.ts) on the simulated disk: what a Raft core's
// ready batches persisted loads back (hard state, entries, a leader's overwrite of a follower's
// tail); a machine crash loses at most the batch whose fsync had not completed, and a torn last
// batch is cut off; a corrupt batch with data after it stops the load naming the file and offset;
// a snapshot starts a new log generation, and a crash in the middle of that leaves a loadable
// directory.
import test from 'node:test';
import assert from 'node:assert/strict';
import { RaftStore } from '../../src/cp/raft-store.js';
import { RaftCore } from '../../src/cp/raft/core.js';
import { RAFT_DEFAULTS } from '../../src/cp/raft/types.js';
import type { Entry, Ready } from '../../src/cp/raft/types.js';
import { GridError } from '../../src/util/errors.js';
import { SeededRandom } from '../../src/util/prng.js';
import { SimDisk } from '../harness/sim-disk.js';

const OPTS = { batchBytesMax: 1 << 20, dataBytesMax: 1 << 16 };
const DIR = 'cp/uuid-1/7';
const bytes = (s: string): Uint8Array => Buffer.from(s);
const entry = (index: number, term: number, data: string): Entry => ({ index, term, kind: 'data', data: bytes(data), members: null });
const ready = (o: Partial<Ready>): Ready => ({ hardState: null, snapshot: null, entries: [], messages: [], committed: [], reads: [], status: null, ...o });

async function persist(store: RaftStore, r: Ready): Promise<void> {
  await new Promise<void>((resolve, reject) => store.persist(r, (e) => (e === null ? resolve() : reject(e))));
}

test('batches load back: hard state, entries, and an overwritten tail', async () => {
  const disk = new SimDisk({ seed: 1 });
  const store = new RaftStore(disk, DIR, OPTS);
  assert.equal(store.load(), null, 'an empty directory is a new member');
  store.init(['a', 'b', 'c']);
  await persist(store, ready({ hardState: { term: 2, vote: 'b', commit: 0 }, entries: [entry(1, 1, 'x'), entry(2, 1, 'y'), entry(3, 2, 'z')] }));
  await persist(store, ready({ hardState: { term: 3, vote: 'c', commit: 1 }, entries: [entry(2, 3, 'Y')] }));
  const loaded = new RaftStore(disk, DIR, OPTS).load();
  assert.ok(loaded !== null);
  assert.deepEqual(loaded.hardState, { term: 3, vote: 'c', commit: 1 });
  assert.deepEqual(loaded.snapshot.members, ['a', 'b', 'c']);
  assert.deepEqual(loaded.entries.map((e) => [e.index, e.term, Buffer.from(e.data).toString()]), [[1, 1, 'x'], [2, 3, 'Y']]);
});

test('a machine crash loses only what was not synced, and a torn last batch is cut off', async () => {
  for (let seed = 1; seed <= 30; seed++) {
    const disk = new SimDisk({ seed });
    const store = new RaftStore(disk, DIR, OPTS);
    store.init(['a']);
    await persist(store, ready({ hardState: { term: 1, vote: 'a', commit: 1 }, entries: [entry(1, 1, 'durable')] }));
    store.persist(ready({ entries: [entry(2, 1, 'maybe')] }), () => {});
    disk.crash({ tearLastWrite: seed % 2 === 0 });
    const loaded = new RaftStore(disk, DIR, OPTS).load();
    assert.ok(loaded !== null);
    assert.deepEqual(loaded.hardState, { term: 1, vote: 'a', commit: 1 }, `seed ${seed}`);
    assert.equal(Buffer.from((loaded.entries[0] as Entry).data).toString(), 'durable');
    assert.ok(loaded.entries.length <= 2);
  }
});

test('a corrupt batch with data after it stops the load, naming the file and offset', async () => {
  const disk = new SimDisk({ seed: 3 });
  const store = new RaftStore(disk, DIR, { ...OPTS, batchBytesMax: 64 });
  store.init(['a']);
  for (let i = 1; i <= 20; i++) await persist(store, ready({ entries: [entry(i, 1, `value-${i}`)] }));
  disk.flipBit(`${DIR}/log-1`, 40, 3);
  assert.throws(() => new RaftStore(disk, DIR, { ...OPTS, batchBytesMax: 64 }).load(), (e: unknown) => e instanceof GridError && e.code === 'ERR_PERSISTENCE_CORRUPT' && /log-1: offset \d+/.test(e.message));
});

test('a whole batch that fails its checksum with batches after it is corruption, even near the end', async () => {
  const disk = new SimDisk({ seed: 4 });
  const store = new RaftStore(disk, DIR, OPTS);
  store.init(['a']);
  for (let i = 1; i <= 3; i++) await persist(store, ready({ entries: [entry(i, 1, `value-${i}`)] }));
  // The second of three small batches (well within batchBytesMax of the end): not a torn tail.
  const size = disk.size(`${DIR}/log-1`);
  disk.flipBit(`${DIR}/log-1`, size - 50, 1);
  assert.throws(() => new RaftStore(disk, DIR, OPTS).load(), (e: unknown) => e instanceof GridError && e.code === 'ERR_PERSISTENCE_CORRUPT' && /log-1: offset \d+/.test(e.message));
});

test('a tear that garbles the last batch\'s length is still the torn tail; a garbled length with a whole batch after it is corruption (cp-sim seeds 3678, 9025)', async () => {
  const disk = new SimDisk({ seed: 5 });
  const store = new RaftStore(disk, DIR, OPTS);
  store.init(['a']);
  for (let i = 1; i <= 3; i++) await persist(store, ready({ entries: [entry(i, 1, `value-${i}`)] }));
  const lastAt = disk.size(`${DIR}/log-1`);
  await persist(store, ready({ entries: [entry(4, 1, 'value-4, the last')] }));
  // Its length now reads smaller than what follows it: before, "fails its checksum with more data after it".
  const length = Buffer.from(disk.readFile(`${DIR}/log-1`)).readUInt32BE(lastAt);
  const bit = Math.floor(Math.log2(length));
  disk.flipBit(`${DIR}/log-1`, lastAt + 3 - Math.floor(bit / 8), bit % 8);
  assert.ok(Buffer.from(disk.readFile(`${DIR}/log-1`)).readUInt32BE(lastAt) < length);
  const loaded = new RaftStore(disk, DIR, OPTS).load();
  assert.deepEqual(loaded?.entries.map((e) => e.index), [1, 2, 3], 'cut off as the torn tail');
  assert.equal(disk.size(`${DIR}/log-1`), lastAt);

  const disk2 = new SimDisk({ seed: 6 });
  const store2 = new RaftStore(disk2, DIR, OPTS);
  store2.init(['a']);
  await persist(store2, ready({ entries: [entry(1, 1, 'value-1')] }));
  const secondAt = disk2.size(`${DIR}/log-1`);
  for (let i = 2; i <= 4; i++) await persist(store2, ready({ entries: [entry(i, 1, `value-${i}`)] }));
  const len2 = Buffer.from(disk2.readFile(`${DIR}/log-1`)).readUInt32BE(secondAt);
  const bit2 = Math.floor(Math.log2(len2));
  disk2.flipBit(`${DIR}/log-1`, secondAt + 3 - Math.floor(bit2 / 8), bit2 % 8);
  assert.throws(() => new RaftStore(disk2, DIR, OPTS).load(), (e: unknown) => e instanceof GridError && e.code === 'ERR_PERSISTENCE_CORRUPT', 'written entries after it: not a tear');
});

/** A group directory with entries 1-5 committed and a snapshot at 3: log-2 holds 4 and 5. */
async function compactedAt3(): Promise<SimDisk> {
  const disk = new SimDisk({ seed: 4 });
  const store = new RaftStore(disk, DIR, OPTS);
  store.init(['a']);
  const entries = [1, 2, 3, 4, 5].map((i) => entry(i, 1, `v${i}`));
  await persist(store, ready({ hardState: { term: 1, vote: 'a', commit: 5 }, entries }));
  store.compact({ index: 3, term: 1, members: ['a'], data: bytes('state@3') }, entries);
  return disk;
}

test('a snapshot starts a new generation; the group restarts from it with the kept entries', async () => {
  const disk = await compactedAt3();
  assert.deepEqual(disk.list(DIR).sort(), ['log-2', 'snapshot']);
  const loaded = new RaftStore(disk, DIR, OPTS).load();
  assert.ok(loaded !== null);
  assert.equal(Buffer.from(loaded.snapshot.data).toString(), 'state@3');
  assert.deepEqual(loaded.entries.map((e) => e.index), [4, 5]);
  assert.equal(loaded.hardState.commit, 5);
});

test('a torn directory (the snapshot gone, the log after it kept) stops the load, naming the snapshot', async () => {
  const disk = await compactedAt3();
  disk.remove(`${DIR}/snapshot`);
  assert.throws(() => new RaftStore(disk, DIR, OPTS).load(), (e: unknown) => e instanceof GridError && e.code === 'ERR_PERSISTENCE_CORRUPT' && /snapshot.*starts at entry 4, the snapshot is missing/.test(e.message));
});

test('a Raft core restarted on its store keeps its term, vote and committed entries', async () => {
  const disk = new SimDisk({ seed: 5 });
  const store = new RaftStore(disk, DIR, OPTS);
  const restored = store.init(['solo']);
  const core = new RaftCore('solo', { ...RAFT_DEFAULTS, tickMs: 100, electionTimeoutMs: 500, electionJitterMs: 0, heartbeatPeriodMs: 100 }, new SeededRandom(1), restored);
  const drain = async (): Promise<void> => {
    while (core.hasReady()) {
      const r = core.ready();
      await persist(store, r);
      core.advance();
    }
  };
  for (let i = 0; i < 10 && core.status().role !== 'leader'; i++) {
    core.tick();
    await drain();
  }
  assert.equal(core.status().role, 'leader');
  core.propose(bytes('one'));
  core.propose(bytes('two'));
  await drain();
  const before = core.status();
  disk.crash();
  const again = new RaftStore(disk, DIR, OPTS).load();
  assert.ok(again !== null);
  const core2 = new RaftCore('solo', RAFT_DEFAULTS, new SeededRandom(2), again);
  assert.deepEqual([core2.status().term, core2.status().vote, core2.status().commit, core2.status().lastIndex], [before.term, before.vote, before.commit, before.lastIndex]);
});
