// What a member that was cut off from its cluster hands back when it joins again (cluster.md,
// "Split brain"). Two cases:
//   - removed: the master dropped this member (it was unreachable for longer than the suspicion
//     timeout) while it still answered callers. Its backups never confirmed some writes (they stood
//     after the backup timeout); those, and only those, are replayed. Everything else it held the
//     cluster already has (the promoted backups).
//   - merging: this member's cluster was the smaller side of a split brain. Everything it owned is
//     replayed into the larger cluster, plus the unconfirmed writes.
// Merge policy (maps have no split-brain policy element in config.md, so Grid applies the
// reference's default): PutIfAbsent per entry. Queue items are stored unless the larger side holds
// an item with the same id and bytes; an unconfirmed poll removes the item with that id and bytes.
// Removals and clears made on the cut-off side are not replayed.
import type { BackupOpWire, OpWire } from '../cluster/messages.js';
import { BACKUP, OP, type ReplicaStore } from '../data/replica-store.js';

export interface ReplayOp {
  readonly partitionId: number;
  readonly op: OpWire;
}

function itemKey(id: number): Buffer {
  return Buffer.from(String(id), 'latin1');
}

/**
 * The operations to replay: unconfirmed writes (in the order they were made) and, when merging, the
 * whole of every partition `owned` says this member owned. A key or queue item appears once.
 */
export function collectReplay(store: ReplicaStore, unconfirmed: readonly { partitionId: number; op: BackupOpWire }[], owned: readonly number[], nowMs: number): { ops: ReplayOp[]; skipped: number } {
  const maps = new Map<string, ReplayOp>();
  const items = new Map<string, ReplayOp | null>();
  let skipped = 0;
  const putEntry = (partitionId: number, map: string, key: Uint8Array, value: Uint8Array, contentType: string | null): void => {
    maps.set(`${map}\u0000${Buffer.from(key).toString('latin1')}`, { partitionId, op: { code: OP.MAP_PUT_IF_ABSENT, name: map, key, value, contentType, timeoutMs: 0 } });
  };
  for (const { partitionId, op } of unconfirmed) {
    const itemId = `${op.name}\u0000${op.itemId}`;
    switch (op.code) {
      case BACKUP.MAP_PUT:
        putEntry(partitionId, op.name, op.key, op.value, op.contentType);
        break;
      case BACKUP.QUEUE_STORE:
        items.set(itemId, { partitionId, op: { code: OP.QUEUE_MERGE_ADD, name: op.name, key: itemKey(op.itemId), value: op.value, contentType: op.contentType, timeoutMs: 0 } });
        break;
      case BACKUP.QUEUE_REMOVE:
        // Stored and taken while cut off: nothing to hand back. Otherwise take it on the other side too.
        if (items.has(itemId)) items.set(itemId, null);
        else items.set(itemId, { partitionId, op: { code: OP.QUEUE_MERGE_REMOVE, name: op.name, key: itemKey(op.itemId), value: op.value, contentType: null, timeoutMs: 0 } });
        break;
      default:
        skipped++; // removals and clears are not merged
    }
  }
  for (const p of owned) {
    const snap = store.exportPartition(p, nowMs);
    for (const e of snap.entries) putEntry(p, e.map, e.key, e.value, e.contentType);
    for (const q of snap.queues) {
      for (const i of q.items) {
        const id = `${q.name}\u0000${i.id}`;
        if (items.get(id) === null) continue;
        items.set(id, { partitionId: p, op: { code: OP.QUEUE_MERGE_ADD, name: q.name, key: itemKey(i.id), value: i.value, contentType: i.contentType, timeoutMs: 0 } });
      }
    }
  }
  const ops: ReplayOp[] = [...maps.values()];
  for (const r of items.values()) if (r !== null) ops.push(r);
  return { ops, skipped };
}
