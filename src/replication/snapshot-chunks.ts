// A partition snapshot cut into chunks for the member protocol (snapshotChunk): entries, queues and
// WAN queues, each chunk about `bytesMax` bytes (a WAN queue's events may span chunks, in order; the
// receiver appends the parts), the WAN marks on the last chunk, and always at least one chunk.
import type { EntryWire, QueueWire, WanQueueWire } from '../cluster/messages.js';

export type SnapshotChunk = { entries: EntryWire[]; queues: QueueWire[]; wan: WanQueueWire[]; wanMarks: { source: string; version: number }[] };

export function snapshotChunks(entries: readonly EntryWire[], queues: readonly QueueWire[], wan: readonly WanQueueWire[], wanMarks: readonly { source: string; version: number }[], bytesMax: number): SnapshotChunk[] {
  const out: SnapshotChunk[] = [];
  let cur: SnapshotChunk = { entries: [], queues: [], wan: [], wanMarks: [] };
  let bytes = 0;
  const push = (): void => {
    out.push(cur);
    cur = { entries: [], queues: [], wan: [], wanMarks: [] };
    bytes = 0;
  };
  for (const e of entries) {
    const size = e.key.length + e.value.length + e.map.length + 80;
    if (bytes > 0 && bytes + size > bytesMax) push();
    cur.entries.push(e);
    bytes += size;
  }
  for (const q of queues) {
    let size = q.name.length + 16;
    for (const i of q.items) size += i.value.length + 24;
    if (bytes > 0 && bytes + size > bytesMax) push();
    cur.queues.push(q);
    bytes += size;
  }
  // A WAN queue may be long: its events are split over chunks, in order (the receiver appends parts).
  for (const q of wan) {
    let part: WanQueueWire['events'][number][] = [];
    const flush = (): void => {
      if (part.length > 0) cur.wan.push({ publisher: q.publisher, events: part });
      part = [];
    };
    for (const e of q.events) {
      const size = e.key.length + e.value.length + e.map.length + e.origin.length + 96;
      if (bytes > 0 && bytes + size > bytesMax) {
        flush();
        push();
      }
      part.push(e);
      bytes += size;
    }
    flush();
  }
  if (cur.entries.length > 0 || cur.queues.length > 0 || cur.wan.length > 0 || out.length === 0) out.push(cur);
  (out[out.length - 1] as SnapshotChunk).wanMarks = [...wanMarks];
  return out;
}
