// A ReplicaStore for unit tests: the default map and queue configurations with the caller's
// changes per name, a seeded random (seed 1 unless given) and 10 waiting polls at most.
import { defaultMap, defaultQueue } from '../../src/config/draft.js';
import type { MapConfig, QueueConfig } from '../../src/config/types.js';
import { ReplicaStore } from '../../src/data/replica-store.js';
import { SeededRandom } from '../../src/util/prng.js';

export interface TestStoreOptions {
  readonly partitionCount: number;
  /** What a map of this name changes from the defaults. */
  readonly map?: (name: string) => Partial<MapConfig>;
  /** What a queue of this name changes from the defaults. */
  readonly queue?: (name: string) => Partial<QueueConfig>;
  readonly seed?: number;
}

export function testStore(o: TestStoreOptions): ReplicaStore {
  const map = o.map;
  const queue = o.queue;
  return new ReplicaStore({
    partitionCount: o.partitionCount,
    resolveMapConfig: map === undefined ? defaultMap : (name) => ({ ...defaultMap(name), ...map(name) }),
    resolveQueueConfig: queue === undefined ? defaultQueue : (name) => ({ ...defaultQueue(name), ...queue(name) }),
    random: new SeededRandom(o.seed ?? 1),
    waitersMax: 10,
  });
}
