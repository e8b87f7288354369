// Which entry to evict when a map holds more entries on this member than its `eviction size`.
// Like the reference, we sample instead of keeping an LRU list: EVICTION_SAMPLE_COUNT random live
// records (random partition, random record), then the worst of them goes: the least recently
// accessed (LRU), the least often read (LFU, ties by older access) or simply the first (RANDOM). An
// expired sample is always taken first. The record just written is never a candidate, so a put is
// never answered by evicting its own entry.
// `eviction-policy NONE` never evicts and ignores `size`; a `size` below 1 is read as unbounded
// (the reference reads 0 as Integer.MAX_VALUE).
import type { EvictionPolicy, MapConfig } from '../config/types.js';
import type { Random } from '../util/clock.js';
import type { RecordTable } from './record-table.js';
import { type ExpiryPolicy, isExpired } from './expiry.js';
import { unreachable } from '../util/assert.js';

export const EVICTION_SAMPLE_COUNT = 15;

/** The most entries the map may hold on this member, or null when it is never evicted. */
export function evictionLimitOf(config: MapConfig): number | null {
  if (config.eviction.policy === 'NONE' || config.eviction.size < 1) return null;
  return config.eviction.size;
}

export interface Victim {
  readonly partitionId: number;
  readonly index: number;
}

export interface EvictionContext {
  readonly tables: readonly (RecordTable | null)[];
  readonly policy: EvictionPolicy;
  readonly expiry: ExpiryPolicy;
  readonly random: Random;
  readonly nowMs: number;
  /** The record just written, never evicted. */
  readonly keepPartitionId: number;
  readonly keepIndex: number;
}

/** Picks the record to evict, or null when there is no record besides the one to keep. */
export function chooseVictim(context: EvictionContext): Victim | null {
  let best: Victim | null = null;
  let bestTable: RecordTable | null = null;
  for (let sample = 0; sample < EVICTION_SAMPLE_COUNT; sample++) {
    const partitionId = randomNonEmptyPartition(context);
    if (partitionId < 0) return null;
    const table = context.tables[partitionId]!;
    const exclude = partitionId === context.keepPartitionId ? context.keepIndex : -1;
    const index = table.randomLiveIndex(context.random, exclude);
    if (index < 0) continue;
    if (isExpired(context.expiry, table.updateTimeMs(index), table.lastAccessTimeMs(index), context.nowMs)) {
      return { partitionId, index };
    }
    if (best === null || bestTable === null || worse(context.policy, table, index, bestTable, best.index)) {
      best = { partitionId, index };
      bestTable = table;
    }
  }
  return best;
}

/** True when record a is a better eviction victim than record b under the policy. */
function worse(policy: EvictionPolicy, a: RecordTable, ai: number, b: RecordTable, bi: number): boolean {
  switch (policy) {
    case 'LRU':
      return a.lastAccessTimeMs(ai) < b.lastAccessTimeMs(bi);
    case 'LFU': {
      const ah = a.hits(ai);
      const bh = b.hits(bi);
      return ah < bh || (ah === bh && a.lastAccessTimeMs(ai) < b.lastAccessTimeMs(bi));
    }
    case 'RANDOM':
    case 'NONE':
      return false;
    default:
      return unreachable(policy);
  }
}

/** A random partition holding a record other than the one to keep (scans on from a random start). */
function randomNonEmptyPartition(context: EvictionContext): number {
  const tables = context.tables;
  const start = context.random.nextInt(tables.length);
  for (let step = 0; step < tables.length; step++) {
    const partitionId = (start + step) % tables.length;
    const table = tables[partitionId];
    if (table === null || table === undefined) continue;
    if (table.count > (partitionId === context.keepPartitionId ? 1 : 0)) return partitionId;
  }
  return -1;
}
