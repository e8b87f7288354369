// Owner writes counted per structure since the member started, for the console's rates
// (console/structures.ts): puts of a map (every put, set, replace and putIfAbsent that stored),
// offers and polls of a queue. Counted where an owner's write makes its backup operation
// (ReplicaStore.changed), so a REST call and a client call count alike; WAN and split-brain merges
// write with their own operations and are not counted as puts.
import { BACKUP } from './ops.js';

/** Structures counted at once (more: the counts start again, so a flood of names cannot grow them). */
const COUNTED_NAMES_MAX = 100_000;

export interface OpCount {
  puts: number;
  offers: number;
  polls: number;
}

export class OpCounts {
  readonly maps = new Map<string, OpCount>();
  readonly queues = new Map<string, OpCount>();

  count(kind: 'map' | 'queue', name: string, code: number): void {
    const counts = kind === 'map' ? this.maps : this.queues;
    let c = counts.get(name);
    if (c === undefined) {
      if (counts.size >= COUNTED_NAMES_MAX) counts.clear();
      c = { puts: 0, offers: 0, polls: 0 };
      counts.set(name, c);
    }
    if (code === BACKUP.MAP_PUT || code === BACKUP.MAP_PUT_EXPIRY) c.puts++;
    else if (code === BACKUP.QUEUE_STORE) c.offers++;
    else if (code === BACKUP.QUEUE_REMOVE || code === BACKUP.QUEUE_REMOVE_MANY) c.polls++;
  }
}
