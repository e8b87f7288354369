// A Raft member's log in memory: a snapshot, the entries after an offset, and the commit, applied
// and stable (persisted) positions. The shell keeps its own copy on disk from the ready batches; this
// is the core's view.
//
// Invariants: offset <= snapshot.index <= applied <= commit <= lastIndex; stable <= lastIndex;
// entries[i].index === offset + 1 + i; a committed entry is never truncated (an assertion: it
// would mean two leaders committed different entries at one index).
import { assert } from '../../util/assert.js';
import type { Entry, Snapshot } from './types.js';

export class RaftLog {
  /** The index before the first entry kept, and its term. */
  private offset: number;
  private offsetTerm: number;
  private entries: Entry[] = [];
  /** The member list in effect at `offset`. */
  private baseMembers: readonly string[];
  /** Indexes of the config entries kept, ascending. */
  private configIndexes: number[] = [];
  /** The lowest index changed since the last ready batch took the unstable entries. */
  private unstableFrom: number;
  snapshot: Snapshot;
  commit: number;
  applied: number;

  constructor(snapshot: Snapshot, entries: readonly Entry[], commit: number) {
    this.snapshot = snapshot;
    this.offset = snapshot.index;
    this.offsetTerm = snapshot.term;
    this.baseMembers = snapshot.members;
    for (const e of entries) {
      if (e.index <= snapshot.index) continue;
      assert(e.index === this.lastIndex() + 1, `restored entries are not contiguous at ${e.index}`);
      this.push(e);
    }
    this.commit = Math.min(Math.max(commit, snapshot.index), this.lastIndex());
    this.applied = snapshot.index;
    this.unstableFrom = this.lastIndex() + 1;
  }

  firstIndex(): number {
    return this.offset + 1;
  }

  lastIndex(): number {
    return this.offset + this.entries.length;
  }

  lastTerm(): number {
    return this.term(this.lastIndex()) as number;
  }

  /** The term of the entry at `index`, or undefined when it is compacted away or not there. */
  term(index: number): number | undefined {
    if (index === this.offset) return this.offsetTerm;
    if (index < this.offset || index > this.lastIndex()) return undefined;
    return (this.entries[index - this.offset - 1] as Entry).term;
  }

  entry(index: number): Entry | undefined {
    if (index <= this.offset) return undefined;
    return this.entries[index - this.offset - 1];
  }

  /** Entries from `from` on, at most `countMax` and `bytesMax` of data (at least one when there is one). */
  slice(from: number, countMax: number, bytesMax: number): Entry[] {
    assert(from > this.offset, `slice from ${from} below the log's first index ${this.offset + 1}`);
    const out: Entry[] = [];
    let bytes = 0;
    for (let i = from; i <= this.lastIndex() && out.length < countMax; i++) {
      const e = this.entries[i - this.offset - 1] as Entry;
      if (out.length > 0 && bytes + e.data.length > bytesMax) break;
      bytes += e.data.length;
      out.push(e);
    }
    return out;
  }

  /** Raft's election restriction: a log at (lastIndex, lastTerm) is at least as up to date as this one. */
  isUpToDate(lastIndex: number, lastTerm: number): boolean {
    const myTerm = this.lastTerm();
    return lastTerm > myTerm || (lastTerm === myTerm && lastIndex >= this.lastIndex());
  }

  /** A leader appends its own entry. */
  append(e: Entry): void {
    assert(e.index === this.lastIndex() + 1, 'a leader appends at the end');
    this.push(e);
  }

  /**
   * A follower takes a leader's entries that follow prevIndex (whose term matched): entries it
   * already holds are kept, the first conflicting one and all after it are replaced. Returns the
   * last index the leader's message vouches for.
   */
  appendFrom(prevIndex: number, entries: readonly Entry[]): number {
    for (const e of entries) {
      if (e.index <= this.offset) continue; // inside the snapshot: committed, so equal
      const held = this.term(e.index);
      if (held === e.term) continue;
      if (held !== undefined) this.truncateFrom(e.index);
      assert(e.index === this.lastIndex() + 1, `entry ${e.index} does not follow the log's end ${this.lastIndex()}`);
      this.push(e);
    }
    return prevIndex + entries.length;
  }

  private truncateFrom(index: number): void {
    assert(index > this.commit, `truncating committed entry ${index} (commit ${this.commit})`);
    this.entries.length = index - this.offset - 1;
    while (this.configIndexes.length > 0 && (this.configIndexes.at(-1) as number) >= index) this.configIndexes.pop();
    if (index < this.unstableFrom) this.unstableFrom = index;
  }

  private push(e: Entry): void {
    this.entries.push(e);
    if (e.kind === 'config') this.configIndexes.push(e.index);
  }

  /** The member list in effect: the last config entry's, appended or not (single-server changes take effect when appended). */
  members(): readonly string[] {
    return this.membersAt(this.lastIndex());
  }

  /** The index of the entry that set the member list in effect (the offset when it came with the snapshot). */
  configIndex(): number {
    return this.configIndexes.at(-1) ?? this.offset;
  }

  /** The member list in effect at `index` (>= offset). */
  membersAt(index: number): readonly string[] {
    for (let i = this.configIndexes.length - 1; i >= 0; i--) {
      const c = this.configIndexes[i] as number;
      if (c <= index) return (this.entries[c - this.offset - 1] as Entry).members as readonly string[];
    }
    return this.baseMembers;
  }

  hasUnstable(): boolean {
    return this.unstableFrom <= this.lastIndex();
  }

  /** Entries appended or replaced since the last call: to persist. */
  takeUnstable(): Entry[] {
    const from = this.unstableFrom;
    this.unstableFrom = this.lastIndex() + 1;
    if (from > this.lastIndex()) return [];
    return this.entries.slice(from - this.offset - 1);
  }

  /** The state machine is at `index` in `data`: keep it as the snapshot, and drop entries before it but a tail. */
  compact(index: number, data: Uint8Array, keep: number): void {
    assert(index <= this.applied && index > this.snapshot.index, `snapshot at ${index} outside (${this.snapshot.index}, ${this.applied}]`);
    this.snapshot = { index, term: this.term(index) as number, members: this.membersAt(index), data };
    this.dropBefore(Math.max(this.offset, index - keep));
  }

  private dropBefore(newOffset: number): void {
    if (newOffset <= this.offset) return;
    const members = this.membersAt(newOffset);
    const term = this.term(newOffset) as number;
    this.entries = this.entries.slice(newOffset - this.offset);
    this.offset = newOffset;
    this.offsetTerm = term;
    this.baseMembers = members;
    this.configIndexes = this.configIndexes.filter((c) => c > newOffset);
  }

  /**
   * A follower installs a leader's snapshot. Entries after it are kept when the log holds the
   * snapshot's last entry (same index and term); otherwise the log starts over from it.
   */
  restore(s: Snapshot): void {
    assert(s.index > this.commit, `a snapshot at ${s.index} is not ahead of commit ${this.commit}`);
    if (this.term(s.index) === s.term) {
      this.dropBefore(s.index);
    } else {
      this.entries = [];
      this.configIndexes = [];
      this.offset = s.index;
      this.offsetTerm = s.term;
    }
    this.baseMembers = s.members;
    // The shell replaces its whole persisted log with the snapshot; a kept suffix is persisted again.
    this.unstableFrom = s.index + 1;
    this.snapshot = s;
    this.commit = s.index;
    this.applied = s.index;
  }
}
