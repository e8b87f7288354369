// Checks the Merkle tree (src/data/merkle-tree.ts) and its upkeep by the map store: the pinned key and
// entry hash definitions (cross-checked with an independent Python transcription of MurmurHash3, since
// two clusters must agree on them); depth limits, leaf selection by the top bits, the parent-is-the-
// sum invariant, order independence; and, model-based, seeded random sequences of puts, overwrites,
// removes, reads meeting expired entries, sweeps, eviction, clears, partition drops and imports on a
// MapService, after each of which every tree it keeps equals a tree rebuilt from scratch from the
// records stored (failures print the seed and step). Also what a tree says about expired entries.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EvictionPolicy, MapConfig } from '../../src/config/types.js';
import { MapService } from '../../src/data/map-service.js';
import {
  MERKLE_DEPTH_MAX,
  MerkleTree,
  leafAtDepth,
  levelStart,
  merkleEntryHashOf,
  merkleKeyHash,
} from '../../src/data/merkle-tree.js';
import { partitionIdOfKey } from '../../src/partition/partition-id.js';
import { SeededRandom } from '../../src/util/prng.js';

const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');

function mapConfig(o: { merkle?: boolean; depth?: number; ttl?: number; maxIdle?: number; policy?: EvictionPolicy; size?: number } = {}): MapConfig {
  return {
    name: 'default',
    backupCount: 1,
    asyncBackupCount: 0,
    timeToLiveSeconds: o.ttl ?? 0,
    maxIdleSeconds: o.maxIdle ?? 0,
    eviction: { policy: o.policy ?? 'NONE', maxSizePolicy: 'PER_NODE', size: o.size ?? 2147483647 },
    merkleTree: { enabled: o.merkle ?? false, depth: o.depth ?? 10 },
    dataPersistence: { enabled: false, fsync: false },
    mergePolicy: { policy: 'PutIfAbsentMergePolicy', batchSize: 100 },
    wanReplicationRef: null,
  };
}

/** A tree rebuilt from scratch from the records a partition of a map stores, expired ones included. */
function rebuilt(service: MapService, mapName: string, partitionId: number, depth: number): MerkleTree {
  const tree = new MerkleTree(depth);
  // nowMs 0 lies before every write of these tests, so nothing reads as expired: every stored record is exported.
  for (const entry of service.exportPartition(partitionId, 0)) {
    if (entry.mapName === mapName) tree.add(merkleKeyHash(entry.key), merkleEntryHashOf(entry.key, entry.value));
  }
  return tree;
}

function randomBytes(random: SeededRandom, length: number): Buffer {
  const out = Buffer.alloc(length);
  for (let i = 0; i < length; i++) out[i] = random.nextInt(256);
  return out;
}

test('the key and entry hashes are pinned: MurmurHash3_x86_32 of the key, then of key ‖ value seeded by the key hash', () => {
  const vectors: [string, string, number, number][] = [
    ['', '', 0x08591014, 0xa45d4655],
    ['abc', 'value', 0x93cb8aa8, 0x02d2c007],
    ['key-1', '{"a":1}', 0x72658a29, 0x577f3e79],
  ];
  for (const [key, value, keyHash, entryHash] of vectors) {
    assert.equal(merkleKeyHash(utf8(key)), keyHash | 0, key);
    assert.equal(merkleEntryHashOf(utf8(key), utf8(value)), entryHash | 0, key);
  }
  assert.notEqual(merkleEntryHashOf(utf8('ab'), utf8('c')), merkleEntryHashOf(utf8('a'), utf8('bc')), 'the split of key and value counts');
  assert.notEqual(merkleKeyHash(utf8('k')), 0);
});

test('the store hashes what merkleEntryHashOf hashes, for every value size (shared and dedicated slab chunks)', () => {
  const service = new MapService({ partitionCount: 3, resolveConfig: () => mapConfig({ merkle: true }), random: new SeededRandom(1) });
  const random = new SeededRandom(5);
  const expected = new Map<string, number>();
  for (const length of [0, 1, 3, 4, 5, 100, 4095, 4096, 10_000]) {
    const key = randomBytes(random, 1 + random.nextInt(20));
    const value = randomBytes(random, length);
    service.put('m', key, partitionIdOfKey(key, 3), value, null, 1000);
    expected.set(key.toString('hex'), merkleEntryHashOf(key, value));
  }
  for (let p = 0; p < 3; p++) {
    for (const digest of service.leafDigests('m', p, 0, [0], 1000)) {
      assert.equal(digest.leaf, 0);
      assert.equal(digest.keyHash, merkleKeyHash(digest.key));
      assert.equal(digest.entryHash, expected.get(digest.key.toString('hex')));
      expected.delete(digest.key.toString('hex'));
    }
  }
  assert.equal(expected.size, 0, 'every entry was digested once');
});

test('depth limits, leaf selection by the top bits of the key hash, levels and the parent-is-the-sum invariant', () => {
  for (const bad of [0, 1, 21, 2.5, NaN]) assert.throws(() => new MerkleTree(bad), /depth/);
  const tree = new MerkleTree(3);
  assert.deepEqual([tree.depth, tree.leafCount, tree.nodeCount], [3, 8, 15]);
  assert.equal(tree.leafOf(0), 0);
  assert.equal(tree.leafOf(-1), 7, 'the unsigned hash: 0xffffffff is in the last leaf');
  assert.equal(tree.leafOf(0x1fffffff), 0);
  assert.equal(tree.leafOf(0x20000000), 1);
  assert.equal(tree.leafOf(-0x80000000), 4, '0x80000000 starts the upper half');
  assert.equal(leafAtDepth(-1, 0), 0);
  assert.equal(leafAtDepth(-1, 20), (1 << 20) - 1);
  const random = new SeededRandom(3);
  const added: [number, number][] = [];
  for (let i = 0; i < 200; i++) {
    const pair: [number, number] = [random.nextInt(2 ** 32) | 0, random.nextInt(2 ** 32) | 0];
    added.push(pair);
    tree.add(pair[0], pair[1]);
  }
  for (let i = 0; i < levelStart(tree.depth); i++) {
    assert.equal(tree.node(i), (tree.node(2 * i + 1) + tree.node(2 * i + 2)) | 0, `node ${i}`);
  }
  assert.equal(tree.level(0)[0], tree.root());
  assert.equal(tree.level(3).length, 8);
  assert.equal(tree.level(3)[5], tree.leafHash(5));
  assert.equal(tree.entryCount, 200);
  const copy = tree.snapshot();
  const replaced = tree.snapshot();
  replaced.replace(added[0]![0], added[0]![1], 12345);
  const expected = tree.snapshot();
  expected.remove(added[0]![0], added[0]![1]);
  expected.add(added[0]![0], 12345);
  assert.ok(replaced.equals(expected), 'replace = remove + add');
  assert.equal(replaced.entryCount, 200);
  for (const [keyHash, entryHash] of added) tree.remove(keyHash, entryHash);
  assert.ok(tree.equals(new MerkleTree(3)), 'removing what was added leaves the empty tree');
  assert.equal(tree.entryCount, 0);
  assert.equal(copy.entryCount, 200, 'a snapshot does not follow its tree');
  assert.notEqual(copy.root(), 0);
  copy.clear();
  assert.ok(copy.equals(tree));
  assert.throws(() => tree.node(15), /out of range/);
  assert.throws(() => tree.remove(1, 1), /empty/);
  assert.equal(new MerkleTree(MERKLE_DEPTH_MAX).leafCount, 2 ** 20);
});

test('order independence: any order of the same adds, and any write history ending in the same entries, give the same tree', () => {
  const random = new SeededRandom(7);
  const pairs = Array.from({ length: 300 }, () => [random.nextInt(2 ** 32) | 0, random.nextInt(2 ** 32) | 0] as const);
  const a = new MerkleTree(8);
  const b = new MerkleTree(8);
  for (const [k, e] of pairs) a.add(k, e);
  const shuffled = [...pairs];
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = random.nextInt(i + 1);
    [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
  }
  for (const [k, e] of shuffled) b.add(k, e);
  assert.ok(a.equals(b));

  // Two stores reach the same entries by different histories (other orders, overwrites, removes).
  const partitionCount = 5;
  const left = new MapService({ partitionCount, resolveConfig: () => mapConfig({ merkle: true, depth: 6 }), random: new SeededRandom(1) });
  const right = new MapService({ partitionCount, resolveConfig: () => mapConfig({ depth: 6 }), random: new SeededRandom(2) });
  const final = new Map<string, string>();
  for (let i = 0; i < 400; i++) final.set(`k${i}`, `v${random.nextInt(1000)}`);
  const put = (s: MapService, k: string, v: string): void => s.put('m', utf8(k), partitionIdOfKey(utf8(k), partitionCount), utf8(v), null, 1000);
  for (const [k, v] of final) put(left, k, v);
  const keys = [...final.keys()].reverse();
  for (const k of keys) put(right, k, 'junk');
  for (const k of keys) put(right, `extra-${k}`, 'gone soon');
  for (const k of keys) put(right, k, final.get(k)!);
  for (const k of keys) right.remove('m', utf8(`extra-${k}`), partitionIdOfKey(utf8(`extra-${k}`), partitionCount), 1000);
  for (let p = 0; p < partitionCount; p++) {
    assert.ok(left.merkleTree('m', p, 1000).equals(right.merkleTree('m', p, 1000)), `partition ${p}`);
  }
});

interface ModelOptions {
  readonly eager: boolean;
  readonly depth: number;
  readonly ttl: number;
  readonly maxIdle: number;
  readonly evictionSize: number | null;
}

/**
 * Random operations on two maps ('m' keeps trees, 'plain' never asks for any); after every step,
 * every tree obtained so far for 'm' (they stay live) must equal one rebuilt from the stored records.
 */
function runModel(seed: number, steps: number, o: ModelOptions): void {
  const partitionCount = 5;
  const treeConfig = mapConfig({
    merkle: o.eager,
    depth: o.depth,
    ttl: o.ttl,
    maxIdle: o.maxIdle,
    ...(o.evictionSize === null ? {} : { policy: 'LRU' as const, size: o.evictionSize }),
  });
  const plainConfig = mapConfig({ ttl: o.ttl });
  const service = new MapService({
    partitionCount,
    resolveConfig: (name) => (name === 'm' ? treeConfig : plainConfig),
    random: new SeededRandom(seed),
  });
  const random = new SeededRandom(seed * 7919);
  const trees = new Map<number, MerkleTree>();
  let now = 1_000_000;
  if (o.eager) service.put('m', utf8('first'), partitionIdOfKey(utf8('first'), partitionCount), utf8('x'), null, now);
  for (let step = 0; step < steps; step++) {
    now += random.nextInt(300);
    const mapName = random.nextInt(5) === 0 ? 'plain' : 'm';
    const key = utf8(`key-${random.nextInt(150)}`);
    const p = partitionIdOfKey(key, partitionCount);
    const roll = random.nextInt(100);
    let what: string;
    if (roll < 45) {
      what = 'put';
      service.put(mapName, key, p, randomBytes(random, random.nextInt(10) === 0 ? 5000 : random.nextInt(60)), null, now);
    } else if (roll < 60) {
      what = 'get';
      service.get(mapName, key, p, now);
    } else if (roll < 75) {
      what = 'remove';
      service.remove(mapName, key, p, now);
    } else if (roll < 80) {
      what = 'import';
      const updated = now - random.nextInt(o.ttl > 0 ? o.ttl * 2000 : 1000);
      service.importEntry(
        p,
        { mapName, key, value: randomBytes(random, random.nextInt(40)), contentType: 'a/b', creationTimeMs: updated - 5, updateTimeMs: updated, lastAccessTimeMs: updated, version: 3, hits: 2 },
        now,
      );
    } else if (roll < 86) {
      what = 'sweep';
      service.sweepExpired(now, 1 + random.nextInt(100));
    } else if (roll < 93) {
      what = 'ask for a tree';
      const partitionId = random.nextInt(partitionCount);
      const tree = service.merkleTree('m', partitionId, now);
      const held = trees.get(partitionId);
      assert.ok(held === undefined || held === tree, `seed=${seed} step=${step}: a partition keeps its tree`);
      trees.set(partitionId, tree);
    } else if (roll < 96) {
      what = 'clear one partition of the map';
      service.clearInPartition(mapName, random.nextInt(partitionCount));
    } else if (roll < 98) {
      what = 'drop a partition';
      service.clearPartition(random.nextInt(partitionCount));
    } else {
      what = 'clear the map';
      service.clear(mapName);
    }
    for (const [partitionId, tree] of trees) {
      const expected = rebuilt(service, 'm', partitionId, tree.depth);
      assert.equal(tree.entryCount, expected.entryCount, `seed=${seed} step=${step} (${what}) partition ${partitionId}: entry count`);
      assert.ok(tree.equals(expected), `seed=${seed} step=${step} (${what}) partition ${partitionId}: every node`);
    }
  }
  assert.ok(trees.size > 0, `seed=${seed}: the run asked for trees`);
}

test('model-based: a tree asked for lazily equals a rebuilt one after every later write (no expiry)', () => {
  for (const seed of [1, 2, 3]) runModel(seed, 1500, { eager: false, depth: 4, ttl: 0, maxIdle: 0, evictionSize: null });
});

test('model-based: trees of a map with merkle-tree enabled, with ttl and max-idle (expiry met by reads, writes, sweeps)', () => {
  for (const seed of [11, 12, 13]) runModel(seed, 1500, { eager: true, depth: 10, ttl: 20, maxIdle: 8, evictionSize: null });
});

test('model-based: trees under LRU eviction and expiry (evicted records leave the tree)', () => {
  for (const seed of [21, 22]) runModel(seed, 1500, { eager: true, depth: 3, ttl: 30, maxIdle: 0, evictionSize: 40 });
});

test('model-based: many keys in one partition through table compaction keep the tree exact', () => {
  const service = new MapService({ partitionCount: 1, resolveConfig: () => mapConfig({ merkle: true, depth: 12 }), random: new SeededRandom(1) });
  const random = new SeededRandom(99);
  service.put('m', utf8('k0'), 0, utf8('first'), null, 1); // a tree of a map not held yet would be a detached empty one
  const tree = service.merkleTree('m', 0, 1);
  for (let step = 0; step < 20_000; step++) {
    const key = utf8(`k${random.nextInt(3000)}`);
    if (random.nextInt(3) === 0) service.remove('m', key, 0, 1000 + step);
    else service.put('m', key, 0, randomBytes(random, random.nextInt(200)), null, 1000 + step);
    if (step % 1000 === 999) assert.ok(tree.equals(rebuilt(service, 'm', 0, 12)), `step ${step}`);
  }
  assert.equal(tree.entryCount, service.size('m', 1e6));
});

test('expired entries: a tree counts stored records until they are removed; merkleTree(nowMs) removes them first', () => {
  const service = new MapService({ partitionCount: 1, resolveConfig: () => mapConfig({ merkle: true, ttl: 10 }), random: new SeededRandom(1) });
  service.put('m', utf8('a'), 0, utf8('1'), null, 1000);
  service.put('m', utf8('b'), 0, utf8('2'), null, 8000);
  const tree = service.merkleTree('m', 0, 9000);
  assert.equal(tree.entryCount, 2);
  // At 15,000 'a' has expired but nobody met it yet: the held tree still counts it, digests do not.
  assert.equal(tree.entryCount, 2);
  assert.deepEqual(service.leafDigests('m', 0, 0, [0], 15_000).map((d) => d.key.toString()), ['b']);
  assert.deepEqual(service.entriesUnderLeaves('m', 0, 0, [0], 15_000).map((e) => e.key.toString()), ['b']);
  assert.deepEqual(service.entriesOf('m', 0, [utf8('a'), utf8('b'), utf8('c')], 15_000).map((e) => e.value.toString()), ['2']);
  assert.equal(service.merkleTree('m', 0, 15_000), tree, 'the same tree, now without the expired record');
  assert.equal(tree.entryCount, 1);
  const onlyB = new MerkleTree(10);
  onlyB.add(merkleKeyHash(utf8('b')), merkleEntryHashOf(utf8('b'), utf8('2')));
  assert.ok(tree.equals(onlyB));
});

test('a map this member does not hold answers an empty tree of its depth without creating the map; depths are capped', () => {
  const service = new MapService({
    partitionCount: 3,
    resolveConfig: (name) => mapConfig({ depth: name === 'deep' ? 27 : 7 }),
    random: new SeededRandom(1),
  });
  const tree = service.merkleTree('absent', 1, 0);
  assert.deepEqual([tree.depth, tree.root(), tree.entryCount], [7, 0, 0]);
  assert.deepEqual(service.mapNames(), []);
  assert.deepEqual(service.leafDigests('absent', 1, 7, [0, 1], 0), []);
  assert.deepEqual(service.entriesOf('absent', 1, [utf8('k')], 0), []);
  assert.equal(service.merkleDepth('absent'), 7);
  assert.equal(service.merkleDepth('deep'), MERKLE_DEPTH_MAX, 'the config allows 27; trees stop at 20');
  assert.deepEqual(service.mapNames(), []);
});
