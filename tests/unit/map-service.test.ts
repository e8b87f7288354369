// Checks the map record store (src/data/map-service.ts and the files under it): put/get/overwrite/
// remove/clear with record metadata; time-to-live and max-idle with injected times, lazy removal and
// the incremental sweep; that every eviction policy keeps the member's entry count <= size after
// every put; that record views stay valid and unchanged after overwrite, removal and compaction;
// binary, empty and large keys and values; partition export/import/clear; and, model-based, many
// seeded random operations compared with a plain Map (failures print the seed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EvictionPolicy, MapConfig } from '../../src/config/types.js';
import { MapService, type MapRecordView } from '../../src/data/map-service.js';
import { partitionIdOfKey } from '../../src/partition/partition-id.js';
import { SeededRandom } from '../../src/util/prng.js';
import { GridError } from '../../src/util/errors.js';

const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');

function mapConfig(overrides: { ttl?: number; maxIdle?: number; policy?: EvictionPolicy; size?: number } = {}): MapConfig {
  return {
    name: 'default',
    backupCount: 1,
    asyncBackupCount: 0,
    timeToLiveSeconds: overrides.ttl ?? 0,
    maxIdleSeconds: overrides.maxIdle ?? 0,
    eviction: { policy: overrides.policy ?? 'NONE', maxSizePolicy: 'PER_NODE', size: overrides.size ?? 2147483647 },
    merkleTree: { enabled: false, depth: 10 },
    dataPersistence: { enabled: false, fsync: false },
    mergePolicy: { policy: 'PutIfAbsentMergePolicy', batchSize: 100 },
    wanReplicationRef: null,
  };
}

/** A service with the given config for every map, plus helpers that route keys like the caller will. */
function harness(config: MapConfig, partitionCount = 271, seed = 1) {
  const service = new MapService({ partitionCount, resolveConfig: () => config, random: new SeededRandom(seed) });
  const pid = (key: Uint8Array): number => partitionIdOfKey(key, partitionCount);
  return {
    service,
    put: (map: string, key: string | Uint8Array, value: string | Uint8Array, nowMs: number, contentType: string | null = 'text/plain') => {
      const k = typeof key === 'string' ? utf8(key) : key;
      service.put(map, k, pid(k), typeof value === 'string' ? utf8(value) : value, contentType, nowMs);
    },
    get: (map: string, key: string | Uint8Array, nowMs: number): MapRecordView | null => {
      const k = typeof key === 'string' ? utf8(key) : key;
      return service.get(map, k, pid(k), nowMs);
    },
    remove: (map: string, key: string | Uint8Array, nowMs: number): boolean => {
      const k = typeof key === 'string' ? utf8(key) : key;
      return service.remove(map, k, pid(k), nowMs);
    },
  };
}

test('put, get, overwrite, remove and clear, with record metadata', () => {
  const h = harness(mapConfig());
  assert.equal(h.get('m', 'a', 1), null, 'unknown map reads as absent');
  assert.deepEqual(h.service.mapNames(), [], 'a read does not create a map');
  h.put('m', 'a', 'one', 1000);
  let view = h.get('m', 'a', 1500)!;
  assert.equal(view.value.toString(), 'one');
  assert.equal(view.contentType, 'text/plain');
  assert.deepEqual(
    [view.creationTimeMs, view.updateTimeMs, view.lastAccessTimeMs, view.version, view.hits],
    [1000, 1000, 1500, 0, 1],
  );
  h.put('m', 'a', 'two', 2000, null);
  view = h.get('m', 'a', 2500)!;
  assert.equal(view.value.toString(), 'two');
  assert.equal(view.contentType, null);
  assert.deepEqual(
    [view.creationTimeMs, view.updateTimeMs, view.lastAccessTimeMs, view.version, view.hits],
    [1000, 2000, 2500, 1, 2],
  );
  h.put('m', 'b', 'bee', 3000);
  h.put('other', 'a', 'elsewhere', 3000);
  assert.equal(h.service.size('m', 3000), 2);
  assert.equal(h.service.totalEntries(), 3);
  assert.deepEqual(h.service.mapNames().sort(), ['m', 'other']);
  assert.equal(h.remove('m', 'a', 3000), true);
  assert.equal(h.remove('m', 'a', 3000), false);
  assert.equal(h.get('m', 'a', 3000), null);
  assert.equal(h.get('other', 'a', 3000)!.value.toString(), 'elsewhere', 'maps are separate');
  assert.equal(h.service.clear('m'), 1);
  assert.equal(h.service.clear('missing'), 0);
  assert.equal(h.service.size('m', 3000), 0);
  assert.equal(h.service.totalEntries(), 1);
  h.put('m', 'b', 'again', 4000);
  assert.equal(h.get('m', 'b', 4000)!.version, 0, 'a cleared key starts a new record');
});

test('content types are interned and freed with their last record', () => {
  const h = harness(mapConfig());
  for (let i = 0; i < 100; i++) h.put('m', `k${i}`, 'v', 1, i % 2 === 0 ? 'text/plain' : `type/${i}`);
  assert.equal(h.service.contentTypeCount(), 51);
  for (let i = 1; i < 100; i += 2) h.put('m', `k${i}`, 'v', 2, 'text/plain');
  assert.equal(h.service.contentTypeCount(), 1);
  h.service.clear('m');
  assert.equal(h.service.contentTypeCount(), 0);
});

test('time-to-live counts from the last update; reads do not extend it', () => {
  const h = harness(mapConfig({ ttl: 10 }));
  h.put('m', 'k', 'v', 0);
  assert.ok(h.get('m', 'k', 9_999));
  assert.equal(h.get('m', 'k', 10_000), null, 'expired exactly ttl after the update');
  assert.equal(h.service.totalEntries(), 0, 'removed lazily on access');
  h.put('m', 'k', 'v1', 20_000);
  h.put('m', 'k', 'v2', 25_000);
  assert.equal(h.get('m', 'k', 34_999)!.value.toString(), 'v2', 'an update restarts the ttl');
  assert.equal(h.remove('m', 'k', 35_000), false, 'removing an expired entry finds nothing');
  h.put('m', 'k', 'v3', 40_000);
  h.put('m', 'k', 'v4', 50_001);
  const view = h.get('m', 'k', 50_001)!;
  assert.equal(view.version, 0, 'a put over an expired entry creates a new record');
  assert.equal(view.creationTimeMs, 50_001);
});

test('max-idle counts from the last access; puts and gets both count', () => {
  const h = harness(mapConfig({ maxIdle: 5 }));
  h.put('m', 'k', 'v', 0);
  assert.ok(h.get('m', 'k', 4_000));
  assert.ok(h.get('m', 'k', 8_999), 'the get at 4 s extended it');
  h.put('m', 'k', 'v2', 13_000);
  assert.ok(h.get('m', 'k', 17_999));
  assert.equal(h.get('m', 'k', 22_999), null);
});

test('sweepExpired removes expired entries incrementally and resumes where it stopped', () => {
  const h = harness(mapConfig({ ttl: 1 }), 17);
  const keep = harness(mapConfig(), 17);
  for (let i = 0; i < 1000; i++) h.put('m', `k${i}`, 'v', i < 600 ? 0 : 5_000);
  h.put('later', 'x', 'y', 5_000);
  assert.equal(h.service.sweepExpired(500, 100_000), 0, 'nothing expired yet');
  let removed = 0;
  let calls = 0;
  while (removed < 600 && calls < 1000) {
    removed += h.service.sweepExpired(1_000, 50);
    calls++;
  }
  assert.equal(removed, 600);
  assert.ok(calls > 5, 'the budget bounds each call');
  assert.equal(h.service.totalEntries(), 401);
  assert.equal(h.service.size('m', 1_000), 400);
  assert.equal(h.service.size('m', 6_000), 0, 'size is exact: it sweeps a map with expiry');
  assert.equal(keep.service.sweepExpired(1e12, 10), 0, 'maps without expiry are skipped');
  assert.equal(h.service.sweepExpired(1e12, 0), 0, 'a zero budget does nothing');
});

for (const policy of ['LRU', 'LFU', 'RANDOM'] as const) {
  test(`eviction ${policy} keeps the entry count <= size after every put`, () => {
    const h = harness(mapConfig({ policy, size: 50 }), 271, 3);
    for (let i = 0; i < 2000; i++) {
      h.put('m', `k${i}`, `v${i}`, i);
      assert.ok(h.service.size('m', i) <= 50, `count ${h.service.size('m', i)} at put ${i}`);
      assert.ok(h.get('m', `k${i}`, i), 'the entry just written is never the victim');
      if (i % 7 === 0) h.get('m', 'k0', i);
    }
    assert.equal(h.service.size('m', 2000), 50);
    if (policy !== 'RANDOM') assert.ok(h.get('m', 'k0', 2000), `${policy} keeps the entry read all along`);
  });
}

test('eviction of a one-entry map keeps only the newest entry', () => {
  const h = harness(mapConfig({ policy: 'LRU', size: 1 }));
  for (let i = 0; i < 100; i++) {
    h.put('m', `k${i}`, 'v', i);
    assert.equal(h.service.size('m', i), 1);
    assert.ok(h.get('m', `k${i}`, i));
  }
});

test('eviction prefers an expired entry and NONE never evicts', () => {
  const h = harness(mapConfig({ policy: 'LFU', size: 2, ttl: 10 }), 1);
  h.put('m', 'old', 'v', 0);
  h.put('m', 'hot', 'v', 9_000);
  for (let i = 0; i < 5; i++) h.get('m', 'old', 9_000);
  h.put('m', 'new', 'v', 10_000);
  assert.ok(h.get('m', 'hot', 10_000) && h.get('m', 'new', 10_000), 'the expired entry went, despite its hits');
  const none = harness(mapConfig({ policy: 'NONE', size: 1 }));
  for (let i = 0; i < 100; i++) none.put('m', `k${i}`, 'v', 0);
  assert.equal(none.service.size('m', 0), 100, 'NONE ignores size');
  const zero = harness(mapConfig({ policy: 'LRU', size: 0 }));
  for (let i = 0; i < 100; i++) zero.put('m', `k${i}`, 'v', 0);
  assert.equal(zero.service.size('m', 0), 100, 'size 0 reads as unbounded');
});

test('record views stay valid and unchanged after overwrite, removal, compaction and clear', () => {
  const h = harness(mapConfig(), 1);
  const held: [MapRecordView, Buffer][] = [];
  const random = new SeededRandom(9);
  for (let round = 0; round < 40; round++) {
    for (let i = 0; i < 200; i++) {
      const value = Buffer.alloc(random.nextInt(200), (round * 7 + i) & 0xff);
      h.put('m', `k${i}`, value, round);
    }
    for (let i = 0; i < 200; i += 10) {
      const view = h.get('m', `k${i}`, round)!;
      held.push([view, Buffer.from(view.value)]);
    }
    for (let i = round % 3; i < 200; i += 3) h.remove('m', `k${i}`, round);
  }
  const big = Buffer.alloc(100_000, 0x5a);
  h.put('m', 'big', big, 100);
  const bigView = h.get('m', 'big', 100)!;
  h.put('m', 'big', 'small now', 101);
  h.service.clear('m');
  for (let i = 0; i < 5000; i++) h.put('m', `again${i}`, Buffer.alloc(100, 0xee), 102);
  for (const [view, copy] of held) assert.ok(view.value.equals(copy), 'a held view kept its bytes');
  assert.ok(bigView.value.equals(big));
});

test('binary values with every byte value, empty values and empty keys', () => {
  const h = harness(mapConfig());
  const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  h.put('m', all, all, 1, 'application/octet-stream');
  assert.ok(h.get('m', all, 1)!.value.equals(all));
  h.put('m', 'empty', new Uint8Array(0), 1);
  const empty = h.get('m', 'empty', 1)!;
  assert.equal(empty.value.length, 0);
  h.put('m', new Uint8Array(0), new Uint8Array(0), 1, null);
  assert.equal(h.get('m', new Uint8Array(0), 1)!.value.length, 0);
  for (let i = 0; i < 20_000; i++) h.put('m', `e${i}`, new Uint8Array(0), 2);
  assert.equal(h.service.size('m', 2), 20_003);
  assert.equal(h.get('m', 'e19999', 2)!.value.length, 0);
});

test('large keys (5,000 characters) and values (1 MiB, 16 MiB); oversized ones are refused', () => {
  const h = harness(mapConfig());
  const key = 'ключ-'.repeat(1000);
  const value = Buffer.alloc(1024 * 1024);
  for (let i = 0; i < value.length; i++) value[i] = (i * 31) & 0xff;
  h.put('m', key, value, 1);
  h.put('m', key + 'x', value.subarray(0, 5000), 1);
  assert.ok(h.get('m', key, 1)!.value.equals(value));
  assert.ok(h.get('m', key + 'x', 1)!.value.equals(value.subarray(0, 5000)));
  h.put('m', key, 'small', 2);
  assert.equal(h.get('m', key, 2)!.value.toString(), 'small');
  const restBodyMax = Buffer.alloc(16 * 1024 * 1024, 0x42);
  h.put('m', 'sixteen', restBodyMax, 3);
  assert.ok(h.get('m', 'sixteen', 3)!.value.equals(restBodyMax), 'a value of the REST body cap (16 MiB) fits');

  const capped = new MapService({ partitionCount: 3, resolveConfig: () => mapConfig(), random: new SeededRandom(1), keyBytesMax: 100, valueBytesMax: 1000 });
  assert.throws(
    () => capped.put('m', new Uint8Array(101), 0, new Uint8Array(1), null, 0),
    (e: unknown) => e instanceof GridError && e.code === 'ERR_DATA_ENTRY_TOO_LARGE' && e.status === 413,
  );
  assert.throws(() => capped.put('m', new Uint8Array(1), 0, new Uint8Array(1001), null, 0), GridError);
  assert.equal(capped.get('m', new Uint8Array(101), 0, 0), null);
  assert.equal(capped.totalEntries(), 0);
  assert.throws(() => capped.get('m', new Uint8Array(1), 3, 0), /partition id/);
});

test('a partition exports, imports elsewhere with its history, and clears as a unit', () => {
  const source = harness(mapConfig({ ttl: 100 }), 7);
  const target = harness(mapConfig({ ttl: 100 }), 7);
  for (let i = 0; i < 500; i++) {
    source.put('a', `k${i}`, `va${i}`, 1_000, 'text/plain');
    source.put('b', `k${i}`, `vb${i}`, 1_000, null);
  }
  source.get('a', 'k1', 2_000);
  const partitionId = partitionIdOfKey(utf8('k1'), 7);
  const inPartition = [...source.service.exportPartition(partitionId, 2_000)];
  assert.ok(inPartition.length > 50 && inPartition.length % 2 === 0);
  for (const entry of inPartition) target.service.importEntry(partitionId, entry, 2_000);
  const copied = target.get('a', 'k1', 3_000)!;
  assert.equal(copied.value.toString(), 'va1');
  assert.deepEqual([copied.creationTimeMs, copied.updateTimeMs, copied.version, copied.hits], [1_000, 1_000, 0, 2]);
  assert.equal(target.get('b', 'k1', 3_000)!.contentType, null);
  assert.equal(source.service.clearPartition(partitionId), inPartition.length);
  assert.equal(source.get('a', 'k1', 3_000), null);
  assert.equal(source.service.totalEntries(), 1000 - inPartition.length);
  assert.equal([...source.service.exportPartition(partitionId, 3_000)].length, 0);
  assert.equal([...target.service.exportPartition(partitionId, 1e9)].length, 0, 'expired entries are not exported');
  const iterator = source.service.exportPartition((partitionId + 1) % 7, 3_000);
  iterator.next();
  source.service.clearPartition((partitionId + 1) % 7);
  assert.throws(() => iterator.next(), /changed during export/);
});

interface ModelEntry {
  value: Buffer;
  contentType: string | null;
  creationTimeMs: number;
  updateTimeMs: number;
  lastAccessTimeMs: number;
  version: number;
  hits: number;
}

/** Random operations against a plain Map that implements the same rules the simple way. */
function runModel(seed: number, operations: number, options: { partitionCount: number; keys: number; ttl: number; maxIdle: number }): void {
  const config = mapConfig({ ttl: options.ttl, maxIdle: options.maxIdle });
  const h = harness(config, options.partitionCount, seed);
  const model = new Map<string, ModelEntry>();
  const random = new SeededRandom(seed);
  const held: [MapRecordView, Buffer][] = [];
  const expired = (e: ModelEntry, now: number): boolean =>
    (options.ttl > 0 && now - e.updateTimeMs >= options.ttl * 1000) || (options.maxIdle > 0 && now - e.lastAccessTimeMs >= options.maxIdle * 1000);
  const live = (key: string, now: number): ModelEntry | undefined => {
    const e = model.get(key);
    if (e !== undefined && expired(e, now)) model.delete(key);
    return model.get(key);
  };
  let now = 1_000_000;
  for (let op = 0; op < operations; op++) {
    now += random.nextInt(400);
    const key = `key-${random.nextInt(options.keys)}`;
    const roll = random.nextInt(100);
    const where = `seed=${seed} op=${op} key=${key}`;
    if (roll < 45) {
      const length = random.nextInt(10) === 0 ? 4096 + random.nextInt(3000) : random.nextInt(300);
      const value = Buffer.alloc(length);
      for (let i = 0; i < length; i++) value[i] = random.nextInt(256);
      const contentType = random.nextInt(3) === 0 ? null : `type/${random.nextInt(4)}`;
      h.put('m', key, value, now, contentType);
      const old = live(key, now);
      model.set(key, {
        value,
        contentType,
        creationTimeMs: old?.creationTimeMs ?? now,
        updateTimeMs: now,
        lastAccessTimeMs: now,
        version: old === undefined ? 0 : old.version + 1,
        hits: old?.hits ?? 0,
      });
    } else if (roll < 80) {
      const view = h.get('m', key, now);
      const e = live(key, now);
      if (e === undefined) {
        assert.equal(view, null, where);
        continue;
      }
      e.lastAccessTimeMs = now;
      e.hits++;
      assert.ok(view !== null, where);
      assert.ok(view.value.equals(e.value), where);
      assert.deepEqual({ ...view, value: null }, { ...e, value: null, ttlMs: -1, maxIdleMs: -1 }, where);
      if (random.nextInt(10) === 0) held.push([view, Buffer.from(view.value)]);
    } else if (roll < 97) {
      assert.equal(h.remove('m', key, now), live(key, now) !== undefined, where);
      model.delete(key);
    } else if (roll < 98) {
      h.service.sweepExpired(now, 1 + random.nextInt(200));
    } else if (roll < 99) {
      for (const k of [...model.keys()]) live(k, now);
      assert.equal(h.service.size('m', now), model.size, where);
    } else if (random.nextInt(4) === 0) {
      h.service.clear('m');
      model.clear();
    }
  }
  for (const k of [...model.keys()]) live(k, now);
  assert.equal(h.service.size('m', now), model.size, `seed=${seed} final size`);
  for (const [k, e] of model) assert.ok(h.get('m', k, now)!.value.equals(e.value), `seed=${seed} final ${k}`);
  for (const [view, copy] of held) assert.ok(view.value.equals(copy), `seed=${seed} a held view changed`);
}

test('model-based: random operations match a plain Map (no expiry, one partition)', () => {
  for (const seed of [1, 2, 3]) runModel(seed, 4000, { partitionCount: 1, keys: 300, ttl: 0, maxIdle: 0 });
});

test('model-based: random operations match a plain Map (ttl and max-idle, several partitions)', () => {
  for (const seed of [11, 12, 13, 14]) runModel(seed, 4000, { partitionCount: 7, keys: 200, ttl: 60, maxIdle: 20 });
});

test('model-based: many keys in one partition exercise index growth and deletion', () => {
  runModel(21, 30_000, { partitionCount: 1, keys: 5000, ttl: 0, maxIdle: 0 });
});

test('model-based with eviction: what is kept matches the model, count stays <= size', () => {
  for (const seed of [31, 32]) {
    const h = harness(mapConfig({ policy: 'LRU', size: 40 }), 5, seed);
    const model = new Map<string, string>();
    const random = new SeededRandom(seed);
    for (let op = 0; op < 5000; op++) {
      const key = `k${random.nextInt(120)}`;
      const roll = random.nextInt(10);
      if (roll < 5) {
        const value = `v${op}`;
        h.put('m', key, value, op);
        model.set(key, value);
      } else if (roll < 8) {
        const view = h.get('m', key, op);
        if (view !== null) assert.equal(view.value.toString(), model.get(key), `seed=${seed} op=${op}`);
      } else {
        h.remove('m', key, op);
        model.delete(key);
      }
      assert.ok(h.service.size('m', op) <= 40, `seed=${seed} op=${op}`);
    }
  }
});

test('entriesBySide splits each map by the partitions this member owns (metrics: owned vs backup)', () => {
  const h = harness(mapConfig());
  const keys = Array.from({ length: 200 }, (_, i) => `k${i}`);
  for (const k of keys) h.put('a', k, 'v', 0);
  h.put('b', 'only', 'v', 0);
  // Own the even partitions: the owned side must hold exactly the keys whose partition is even.
  const owned = Array.from({ length: 271 }, (_, p) => p % 2 === 0);
  const expectedOwned = keys.filter((k) => (owned[partitionIdOfKey(utf8(k), 271)] as boolean)).length;
  const sides = h.service.entriesBySide(owned);
  assert.deepEqual(sides[0], { name: 'a', owned: expectedOwned, backup: 200 - expectedOwned });
  assert.ok(expectedOwned > 0 && expectedOwned < 200, 'the keys fall on both sides');
  assert.equal((sides[1]?.owned ?? 0) + (sides[1]?.backup ?? 0), 1);
  assert.deepEqual(h.service.entriesBySide(new Array<boolean>(271).fill(true))[0], { name: 'a', owned: 200, backup: 0 });
});
