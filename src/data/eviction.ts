// Which entry to evict when a map holds more entries on this member than its `eviction size`.
// Like the reference, we sample instead of keeping an LRU list: from a random partition and a random
// record in it, the next EVICTION_SAMPLE_COUNT live records (walking on into the following
// partitions if needed; consecutive records share cache lines, so sampling stays cheap), then the
// worst of them goes: the least recently accessed (LRU), the least often read (LFU, ties by older
// access) or a uniformly chosen one (RANDOM). An expired sample is taken at once. The record just
// written is never a candidate, so a put is never answered by evicting its own entry.
// `eviction-policy NONE` never evicts and ignores `size`; a `size` below 1 is read as unbounded
// (the reference reads 0 as Integer.MAX_VALUE).
import type { EvictionPolicy, MapConfig } from '../config/types.js';
import type { Random } from '../util/clock.js';
import type { RecordTable } from './record-table.js';
import type { ExpiryPolicy } from './expiry.js';
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
  const { tables, random, keepPartitionId, keepIndex } = context;
  let partitionId = random.nextInt(tables.length);
  let table = tables[partitionId] ?? null;
  let index = table === null || table.highWater === 0 ? 0 : random.nextInt(table.highWater);
  let bestPartitionId = -1;
  let bestIndex = -1;
  let sampled = 0;
  // Walks on from the random start through records, then partitions, wrapping once at most.
  for (let partitionsEntered = 0; sampled < EVICTION_SAMPLE_COUNT && partitionsEntered <= tables.length; ) {
    if (table === null || index >= table.highWater) {
      partitionId = (partitionId + 1) % tables.length;
      table = tables[partitionId] ?? null;
      index = 0;
      partitionsEntered++;
      continue;
    }
    if (table.isLive(index) && (index !== keepIndex || partitionId !== keepPartitionId)) {
      if (table.isExpiredAt(index, context.expiry, context.nowMs)) {
        return { partitionId, index };
      }
      sampled++;
      const best = bestPartitionId < 0 ? null : tables[bestPartitionId]!;
      if (best === null || better(context.policy, table, index, best, bestIndex, random, sampled)) {
        bestPartitionId = partitionId;
        bestIndex = index;
      }
    }
    index++;
  }
  return bestPartitionId < 0 ? null : { partitionId: bestPartitionId, index: bestIndex };
}

/** True when record a (the n-th sample) is a better eviction victim than record b under the policy. */
function better(policy: EvictionPolicy, a: RecordTable, ai: number, b: RecordTable, bi: number, random: Random, n: number): boolean {
  switch (policy) {
    case 'LRU':
      return a.lastAccessTimeMs(ai) < b.lastAccessTimeMs(bi);
    case 'LFU': {
      const ah = a.hits(ai);
      const bh = b.hits(bi);
      return ah < bh || (ah === bh && a.lastAccessTimeMs(ai) < b.lastAccessTimeMs(bi));
    }
    case 'RANDOM':
      return random.nextInt(n) === 0; // reservoir sampling: each sample wins with probability 1/n
    case 'NONE':
      return false;
    default:
      return unreachable(policy);
  }
}
