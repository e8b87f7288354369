// Checks the Merkle comparison and digest diff (src/wan/merkle-compare.ts) on two MapServices standing
// for a source and a target cluster, filled from one seed with slightly different data: the top-down
// comparison finds exactly the leaves holding a differing entry (computed independently from the
// changed keys), asks only for children of differing nodes (checked round by round) and so far fewer
// node hashes than the tree has; the one-round leaf-level variant agrees; trees of different depths
// compare at the shallower depth; the digest diff finds exactly the keys missing on or differing from
// the target, counts the target-only ones, and sending just those entries leaves only the target-only
// leaves differing; and the consistency counts add up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { MapConfig } from '../../src/config/types.js';
import { MapService } from '../../src/data/map-service.js';
import { MerkleTree, leafAtDepth, merkleKeyHash } from '../../src/data/merkle-tree.js';
import {
  NO_CONSISTENCY_COUNTS,
  addPartitionCounts,
  answerNodeHashes,
  compareTrees,
  diffDigests,
  diffPercent,
  startCompare,
} from '../../src/wan/merkle-compare.js';
import { partitionIdOfKey } from '../../src/partition/partition-id.js';
import { SeededRandom } from '../../src/util/prng.js';

const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');
const PARTITIONS = 4;

function mapConfig(depth: number): MapConfig {
  return {
    name: 'default',
    backupCount: 1,
    asyncBackupCount: 0,
    timeToLiveSeconds: 0,
    maxIdleSeconds: 0,
    eviction: { policy: 'NONE', maxSizePolicy: 'PER_NODE', size: 2147483647 },
    merkleTree: { enabled: true, depth },
    dataPersistence: { enabled: false, fsync: false },
    mergePolicy: { policy: 'PutIfAbsentMergePolicy', batchSize: 100 },
    wanReplicationRef: null,
  };
}

interface Pair {
  readonly source: MapService;
  readonly target: MapService;
  /** Keys whose value differs, or which are missing on the target: what a delta sync must send. */
  readonly toSync: Set<string>;
  /** Keys only the target holds. */
  readonly targetOnly: Set<string>;
}

/** `entries` equal entries on both sides, then `changes` differences of three kinds, chosen from `seed`. */
function pair(seed: number, entries: number, changes: number, sourceDepth = 10, targetDepth = 10): Pair {
  const source = new MapService({ partitionCount: PARTITIONS, resolveConfig: () => mapConfig(sourceDepth), random: new SeededRandom(1) });
  const target = new MapService({ partitionCount: PARTITIONS, resolveConfig: () => mapConfig(targetDepth), random: new SeededRandom(2) });
  const put = (s: MapService, k: string, v: string): void => s.put('m', utf8(k), partitionIdOfKey(utf8(k), PARTITIONS), utf8(v), null, 1000);
  for (let i = 0; i < entries; i++) {
    put(source, `key-${i}`, `value-${i}`);
    put(target, `key-${i}`, `value-${i}`);
  }
  const random = new SeededRandom(seed);
  const toSync = new Set<string>();
  const targetOnly = new Set<string>();
  for (let c = 0; c < changes; c++) {
    const k = `key-${random.nextInt(entries)}`;
    const kind = c % 3;
    if (toSync.has(k)) continue;
    if (kind === 0) {
      put(target, k, `stale-${c}`);
      toSync.add(k);
    } else if (kind === 1) {
      target.remove('m', utf8(k), partitionIdOfKey(utf8(k), PARTITIONS), 1000);
      toSync.add(k);
    } else {
      put(target, `only-on-target-${c}`, 'x');
      targetOnly.add(`only-on-target-${c}`);
    }
  }
  return { source, target, toSync, targetOnly };
}

/** The leaves at `depth` of partition p that hold one of `keys`. */
function leavesOf(keys: Iterable<string>, p: number, depth: number): number[] {
  const leaves = new Set<number>();
  for (const k of keys) if (partitionIdOfKey(utf8(k), PARTITIONS) === p) leaves.add(leafAtDepth(merkleKeyHash(utf8(k)), depth));
  return [...leaves].sort((a, b) => a - b);
}

test('top-down comparison finds exactly the differing leaves and asks only for children of differing nodes', () => {
  for (const seed of [1, 2, 3]) {
    const { source, target, toSync, targetOnly } = pair(seed, 20_000, 12);
    for (let p = 0; p < PARTITIONS; p++) {
      const local = source.merkleTree('m', p, 1000);
      const remote = target.merkleTree('m', p, 1000);
      const comparison = startCompare(local.snapshot(), remote.depth);
      let next = comparison.next;
      let rounds = 0;
      assert.ok(!next.done);
      assert.deepEqual(next.request, [0], 'the first request is the root');
      while (!next.done) {
        for (const index of next.request) {
          if (index === 0) continue;
          const parent = (index - 1) >>> 1;
          assert.notEqual(local.node(parent), remote.node(parent), `seed=${seed} p=${p}: node ${index} asked under an equal parent`);
        }
        next = comparison.step(answerNodeHashes(remote, next.request)!);
        rounds++;
      }
      const result = next.result;
      const expected = leavesOf([...toSync, ...targetOnly], p, 10);
      assert.deepEqual(result.diffLeaves, expected, `seed=${seed} p=${p}`);
      assert.equal(result.depth, 10);
      assert.equal(result.checkedLeaves, 1024);
      assert.equal(result.rounds, rounds);
      if (expected.length === 0) {
        assert.equal(result.nodesRequested, 1, 'equal roots end the comparison at once');
      } else {
        assert.equal(rounds, 11, 'one round per level, root to leaves');
        assert.ok(result.nodesRequested <= 1 + 2 * 10 * expected.length, `seed=${seed} p=${p}: ${result.nodesRequested} nodes`);
        assert.ok(result.nodesRequested < local.nodeCount / 10, 'far below the 2047 nodes of the tree');
      }
      const oneRound = compareTrees(local, remote, { firstLevel: 10 });
      assert.deepEqual(oneRound.diffLeaves, result.diffLeaves, 'comparing every leaf at once agrees');
      assert.deepEqual([oneRound.rounds, oneRound.nodesRequested], [1, 1024]);
    }
  }
});

test('equal data gives equal trees and an empty diff; a comparison cannot be stepped once done', () => {
  const { source, target } = pair(4, 3000, 0);
  for (let p = 0; p < PARTITIONS; p++) {
    const result = compareTrees(source.merkleTree('m', p, 1000), target.merkleTree('m', p, 1000));
    assert.deepEqual([result.diffLeaves, result.rounds, result.nodesRequested], [[], 1, 1]);
  }
  const comparison = startCompare(source.merkleTree('m', 0, 1000), 10);
  const done = comparison.step(answerNodeHashes(target.merkleTree('m', 0, 1000), [0])!);
  assert.ok(done.done);
  assert.throws(() => comparison.step([0]), /already done/);
  assert.throws(() => startCompare(new MerkleTree(10), 10).step([1, 2]), /one remote hash per requested node/);
  assert.throws(() => startCompare(new MerkleTree(10), 21), /depths/);
  assert.equal(answerNodeHashes(new MerkleTree(2), [0, 7]), null, 'a node the tree lacks');
  assert.equal(answerNodeHashes(new MerkleTree(2), [-1]), null);
});

test('trees of different depths compare at the shallower depth, both ways', () => {
  const { source, target, toSync, targetOnly } = pair(5, 5000, 9, 10, 6);
  for (let p = 0; p < PARTITIONS; p++) {
    const deep = source.merkleTree('m', p, 1000);
    const shallow = target.merkleTree('m', p, 1000);
    assert.deepEqual([deep.depth, shallow.depth], [10, 6]);
    const expected = leavesOf([...toSync, ...targetOnly], p, 6);
    const down = compareTrees(deep, shallow);
    const up = compareTrees(shallow, deep);
    assert.deepEqual([down.depth, down.checkedLeaves], [6, 64]);
    assert.deepEqual(down.diffLeaves, expected, `p=${p}`);
    assert.deepEqual(up.diffLeaves, expected, `p=${p}`);
  }
  // Equal data: the deep tree's level 6 is the shallow tree's leaf level, hash for hash.
  const equal = pair(6, 2000, 0, 12, 6);
  for (let p = 0; p < PARTITIONS; p++) {
    const deep = equal.source.merkleTree('m', p, 1000);
    const shallow = equal.target.merkleTree('m', p, 1000);
    assert.deepEqual([...deep.level(6)], [...shallow.level(6)]);
    assert.deepEqual(compareTrees(deep, shallow).diffLeaves, []);
  }
});

test('digest diff: exactly the keys to send, target-only ones counted; sending them leaves only target-only leaves', () => {
  for (const [seed, sourceDepth, targetDepth] of [[7, 10, 10], [8, 8, 11]] as const) {
    const { source, target, toSync, targetOnly } = pair(seed, 8000, 30, sourceDepth, targetDepth);
    let counts = NO_CONSISTENCY_COUNTS;
    const sent = new Set<string>();
    let remoteOnly = 0;
    for (let p = 0; p < PARTITIONS; p++) {
      const result = compareTrees(source.merkleTree('m', p, 1000), target.merkleTree('m', p, 1000));
      const local = source.leafDigests('m', p, result.depth, result.diffLeaves, 1000);
      const remote = target.leafDigests('m', p, result.depth, result.diffLeaves, 1000);
      for (const d of local) assert.ok(result.diffLeaves.includes(d.leaf) && leafAtDepth(d.keyHash, result.depth) === d.leaf);
      const diff = diffDigests(local, remote);
      counts = addPartitionCounts(counts, result, diff.toSync.length);
      remoteOnly += diff.remoteOnly;
      const keys = diff.toSync.map((d) => d.key);
      for (const k of keys) sent.add(k.toString());
      const entries = source.entriesOf('m', p, keys, 1000);
      assert.equal(entries.length, keys.length);
      assert.deepEqual(
        source.entriesUnderLeaves('m', p, result.depth, result.diffLeaves, 1000).map((e) => e.key.toString()).sort(),
        local.map((d) => d.key.toString()).sort(),
        'the entries under the leaves are the digested ones',
      );
      for (const entry of entries) target.importEntry(p, entry, 2000);
      const after = compareTrees(source.merkleTree('m', p, 2000), target.merkleTree('m', p, 2000));
      assert.deepEqual(after.diffLeaves, leavesOf(targetOnly, p, result.depth), `seed=${seed} p=${p}: only target-only entries still differ`);
    }
    assert.deepEqual([...sent].sort(), [...toSync].sort(), `seed=${seed}`);
    assert.equal(remoteOnly, targetOnly.size);
    assert.equal(counts.checkedPartitions, PARTITIONS);
    assert.equal(counts.checkedLeaves, PARTITIONS * 2 ** Math.min(sourceDepth, targetDepth));
    assert.equal(counts.entriesToSync, toSync.size);
    assert.ok(counts.diffLeaves >= 1 && counts.diffPartitions >= 1 && counts.diffPartitions <= PARTITIONS);
    assert.equal(diffPercent(counts), (counts.diffLeaves / counts.checkedLeaves) * 100);
  }
});

test('digest diff by pairs: missing, differing, target-only, colliding key hashes, signed or unsigned hashes', () => {
  const local = [
    { keyHash: 1, entryHash: 10, name: 'same' },
    { keyHash: 2, entryHash: 20, name: 'differs' },
    { keyHash: 3, entryHash: 30, name: 'missing' },
    { keyHash: 4, entryHash: 40, name: 'collides, same' },
    { keyHash: 4, entryHash: 41, name: 'collides, missing' },
    { keyHash: -1, entryHash: -2, name: 'negative' },
  ];
  const remote = [
    { keyHash: 1, entryHash: 10 },
    { keyHash: 2, entryHash: 21 },
    { keyHash: 4, entryHash: 40 },
    { keyHash: 0xffffffff, entryHash: 0xfffffffe },
    { keyHash: 5, entryHash: 50 },
    { keyHash: 6, entryHash: 60 },
  ];
  const diff = diffDigests(local, remote);
  assert.deepEqual(diff.toSync.map((d) => d.name), ['differs', 'missing', 'collides, missing']);
  assert.deepEqual([diff.missingOnRemote, diff.differing, diff.remoteOnly], [1, 2, 2]);
  assert.deepEqual(diffDigests([], remote).remoteOnly, 6);
  assert.deepEqual(diffDigests(local, []).toSync.length, local.length);
  assert.equal(diffPercent(NO_CONSISTENCY_COUNTS), 0);
});
