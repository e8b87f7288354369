// Memory per map entry, measured: loads N entries (10-byte keys `k000000001`, 100-byte values,
// content type "text/plain") into a MapService through its public API, forces GC, and reports
// (RSS after - RSS before) / N and (heapUsed + external after - before) / N; then times gets.
// Target: <= 220 resident bytes per entry at N = 1,000,000.
// Run: node --import tsx scripts/bench/memory.ts [entries]   (re-spawns itself with --expose-gc)
import { defaultMap } from '../../src/config/draft.js';
import { spawnSync } from 'node:child_process';
import type { MapConfig } from '../../src/config/types.js';
import { MapService } from '../../src/data/map-service.js';
import { partitionIdOfKey } from '../../src/partition/partition-id.js';
import { SeededRandom } from '../../src/util/prng.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) {
  const child = spawnSync(process.execPath, ['--expose-gc', ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exit(child.status ?? 1);
}

const ENTRIES = Number(process.argv[2] ?? 1_000_000);
const KEY_BYTES = 10;
const VALUE_BYTES = 100;
const PARTITIONS = 271;

// The built-in default map: no expiry, no eviction.
const config: MapConfig = defaultMap('default');

function settle(): NodeJS.MemoryUsage {
  for (let i = 0; i < 4; i++) gc!();
  return process.memoryUsage();
}

/** Writes `k` + 9 decimal digits of i into the scratch key (the store copies it). */
function fillKey(key: Buffer, i: number): void {
  key[0] = 0x6b;
  for (let pos = KEY_BYTES - 1, n = i; pos >= 1; pos--, n = Math.floor(n / 10)) key[pos] = 0x30 + (n % 10);
}

const service = new MapService({ partitionCount: PARTITIONS, resolveConfig: () => config, random: new SeededRandom(1) });
const key = Buffer.alloc(KEY_BYTES);
const value = Buffer.alloc(VALUE_BYTES, 0x61);
const partitionOf = new Uint16Array(ENTRIES);
const before = settle();

let start = process.hrtime.bigint();
for (let i = 0; i < ENTRIES; i++) {
  fillKey(key, i + 1);
  const partitionId = partitionIdOfKey(key, PARTITIONS);
  partitionOf[i] = partitionId;
  value.writeUInt32LE(i, 0);
  service.put('bench', key, partitionId, value, 'text/plain', 1_700_000_000_000 + i);
}
const putSeconds = Number(process.hrtime.bigint() - start) / 1e9;

const after = settle();
const rssPerEntry = (after.rss - before.rss) / ENTRIES;
const heapPerEntry = (after.heapUsed + after.external - before.heapUsed - before.external) / ENTRIES;

const random = new SeededRandom(7);
let found = 0;
start = process.hrtime.bigint();
for (let n = 0; n < ENTRIES; n++) {
  const i = random.nextInt(ENTRIES);
  fillKey(key, i + 1);
  const view = service.get('bench', key, partitionOf[i]!, 1_800_000_000_000);
  if (view !== null && view.value.readUInt32LE(0) === i) found++;
}
const getSeconds = Number(process.hrtime.bigint() - start) / 1e9;
if (found !== ENTRIES || service.totalEntries() !== ENTRIES) throw new Error(`lost entries: found ${found} of ${ENTRIES}`);

const putsPerSecond = Math.round(ENTRIES / putSeconds);
const getsPerSecond = Math.round(ENTRIES / getSeconds);
console.log(
  `memory: ${ENTRIES} entries (${KEY_BYTES}-byte keys, ${VALUE_BYTES}-byte values): ` +
    `${rssPerEntry.toFixed(1)} RSS bytes/entry, ${heapPerEntry.toFixed(1)} heap+external bytes/entry; ` +
    `${putsPerSecond} puts/s, ${getsPerSecond} gets/s (incl. partition hashing and key formatting)`,
);
console.log(
  JSON.stringify({
    bench: 'memory',
    entries: ENTRIES,
    rssBytesPerEntry: Math.round(rssPerEntry * 10) / 10,
    heapBytesPerEntry: Math.round(heapPerEntry * 10) / 10,
    putsPerSecond,
    getsPerSecond,
  }),
);
