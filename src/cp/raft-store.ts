// CP persistence for one Raft group on one CP member (spec/cp.md "CP persistence"): its term and
// vote, its log and its latest snapshot under `dir` (base-dir/<cp-member-uuid>/<group-id>/),
// CRC-32C checked, fsynced before the shell sends what claims them. All file access goes through
// a Disk (persistence/disk.ts), so the simulated disk's crashes, torn writes and failed fsyncs
// exercise it.
//
// Files:
//   snapshot    one record: u64 index | u64 term | u32 n | n × str member | bytes data
//               (written to snapshot.tmp, synced, renamed over: either the old or the new one)
//   log-<gen>   batches, one per ready batch, each: u32 length (this field included) | u32 CRC-32C
//               of the rest | records; record = u8 type | body:
//                 1 entry:      u64 index | u64 term | u8 kind | bytes data | u32 n | n × str member
//                 2 hard state: u64 term | str vote ('' = none) | u64 commit
//               An entry replaces any earlier one at its index or after (a follower's log that a
//               leader overwrote). A snapshot starts a new generation holding the hard state and
//               the entries after it; the old one is removed once the new one is durable.
//
// Torn tails: the shell persists one batch at a time and waits for its fsync, so only the last
// batch can be torn by a crash, its length field included. A bad batch within one maximum batch of
// the end with no whole batch after it is that tail and is cut off; a bad batch with a whole batch
// after it, or one further from the end, is corruption, and loading stops the member with the
// file and offset named.
import { ByteReader, ByteWriter } from '../util/bytes.js';
import { GridError } from '../util/errors.js';
import { crc32c } from '../persistence/crc32c.js';
import { joinPath } from '../persistence/disk.js';
import type { Disk } from '../persistence/disk.js';
import type { Entry, HardState, Ready, Snapshot } from './raft/types.js';
import type { RaftRestored } from './raft/core.js';

const KINDS = ['data', 'noop', 'config'] as const;
const ID_BYTES_MAX = 128;
const MEMBERS_MAX = 16;

export interface RaftStoreOptions {
  /** The largest batch a ready can produce (also the bound on a torn tail). */
  readonly batchBytesMax: number;
  readonly dataBytesMax: number;
}

export class RaftStore {
  private generation = 0;
  private hard: HardState = { term: 0, vote: null, commit: 0 };

  constructor(
    private readonly disk: Disk,
    private readonly dir: string,
    private readonly opts: RaftStoreOptions,
  ) {}

  private logPath(gen = this.generation): string {
    return joinPath(this.dir, `log-${gen}`);
  }

  /** What the directory holds, or null when it holds nothing (a new member of the group). */
  load(): RaftRestored | null {
    this.disk.makeDir(this.dir);
    const names = this.disk.list(this.dir);
    const gens = names.filter((n) => /^log-\d+$/.test(n)).map((n) => Number(n.slice(4)));
    const snapPath = joinPath(this.dir, 'snapshot');
    const snapshot = this.disk.exists(snapPath) ? this.readSnapshot(snapPath) : null;
    if (gens.length === 0 && snapshot === null) return null;
    this.generation = gens.length === 0 ? 0 : Math.max(...gens);
    for (const n of names) if (n.endsWith('.tmp') || (n.startsWith('log-') && n !== `log-${this.generation}`)) this.disk.remove(joinPath(this.dir, n));
    const entries: Entry[] = [];
    if (gens.length > 0) this.readLog(this.logPath(), entries);
    const base: Snapshot = snapshot ?? { index: 0, term: 0, members: [], data: new Uint8Array(0) };
    const kept = entries.filter((e) => e.index > base.index);
    // The log must go on from the snapshot: a gap means the snapshot file is missing or older
    // than the log that follows it (a torn directory), and the entries in between are gone.
    const first = kept[0];
    if (first !== undefined && first.index !== base.index + 1) {
      throw corrupt(snapPath, 0, `the log ${this.logPath()} starts at entry ${first.index}, the snapshot ${snapshot === null ? 'is missing' : `ends at entry ${base.index}`}`);
    }
    return { hardState: this.hard, snapshot: base, entries: kept };
  }

  /** Creates the directory for a new member of a group that starts from `members`. */
  init(members: readonly string[]): RaftRestored {
    this.disk.makeDir(this.dir);
    const s: Snapshot = { index: 0, term: 0, members, data: new Uint8Array(0) };
    this.writeSnapshot(s);
    this.generation = 1;
    this.disk.append(this.logPath(), this.batch(this.hard, []));
    this.disk.syncNow(this.logPath());
    this.disk.syncDir(this.dir);
    return { hardState: this.hard, snapshot: s, entries: [] };
  }

  /** Persists a ready batch; `done` runs once it is durable (then the shell may send). */
  persist(ready: Ready, done: (error: Error | null) => void): void {
    if (ready.snapshot !== null) this.replaceWithSnapshot(ready.snapshot, ready.hardState ?? this.hard, []);
    if (ready.hardState !== null) this.hard = ready.hardState;
    if (ready.hardState === null && ready.entries.length === 0) return done(null);
    this.disk.append(this.logPath(), this.batch(ready.hardState, ready.entries));
    this.disk.sync(this.logPath(), done);
  }

  /**
   * The member took a snapshot of its state machine: it becomes the snapshot file, and a new log
   * generation holds the hard state and the entries after it (`kept`).
   */
  compact(snapshot: Snapshot, kept: readonly Entry[]): void {
    this.replaceWithSnapshot(snapshot, this.hard, kept);
  }

  private replaceWithSnapshot(s: Snapshot, hard: HardState, kept: readonly Entry[]): void {
    this.writeSnapshot(s);
    const next = this.generation + 1;
    const tmp = `${this.logPath(next)}.tmp`;
    this.disk.append(tmp, this.batch(hard, kept.filter((e) => e.index > s.index)));
    this.disk.syncNow(tmp);
    this.disk.rename(tmp, this.logPath(next));
    this.disk.syncDir(this.dir);
    if (this.disk.exists(this.logPath())) {
      this.disk.close(this.logPath());
      this.disk.remove(this.logPath());
    }
    this.generation = next;
    this.hard = hard;
  }

  private writeSnapshot(s: Snapshot): void {
    const w = new ByteWriter(64 + s.data.length);
    w.u32(0).u32(0).u64(s.index).u64(s.term).u32(s.members.length);
    for (const u of s.members) w.string(u, ID_BYTES_MAX);
    w.bytes(s.data, 0xffff_ffff);
    const b = seal(w.finish());
    const path = joinPath(this.dir, 'snapshot');
    const tmp = `${path}.tmp`;
    if (this.disk.exists(tmp)) this.disk.remove(tmp);
    this.disk.append(tmp, b);
    this.disk.syncNow(tmp);
    this.disk.close(tmp);
    this.disk.rename(tmp, path);
    this.disk.syncDir(this.dir);
  }

  private readSnapshot(path: string): Snapshot {
    const b = this.disk.readFile(path);
    if (!checked(b, 0)) throw corrupt(path, 0, 'the snapshot fails its checksum');
    const r = new ByteReader(b, 'ERR_PERSISTENCE_CORRUPT', 8, readLength(b, 0));
    const index = r.u64();
    const term = r.u64();
    const n = r.count(MEMBERS_MAX, 'members');
    const members: string[] = [];
    for (let i = 0; i < n; i++) members.push(r.string(ID_BYTES_MAX, 'member'));
    const data = r.bytes(0xffff_ffff, 'snapshot data');
    r.expectEnd('snapshot');
    return { index, term, members, data };
  }

  private batch(hard: HardState | null, entries: readonly Entry[]): Buffer {
    const w = new ByteWriter(64);
    w.u32(0).u32(0);
    if (hard !== null) w.u8(2).u64(hard.term).string(hard.vote ?? '', ID_BYTES_MAX).u64(hard.commit);
    for (const e of entries) {
      w.u8(1).u64(e.index).u64(e.term).u8(KINDS.indexOf(e.kind)).bytes(e.data, this.opts.dataBytesMax).u32(e.members?.length ?? 0);
      for (const u of e.members ?? []) w.string(u, ID_BYTES_MAX);
    }
    return seal(w.finish());
  }

  private readLog(path: string, entries: Entry[]): void {
    const b = this.disk.readFile(path);
    let at = 0;
    while (at < b.length) {
      const len = b.length - at >= 8 ? readLength(b, at) : 0;
      if (len < 8 || at + len > b.length || !checked(b, at)) {
        // Only the last batch can be torn, and a tear can garble its length too: it is the torn
        // tail when no whole batch follows it (and it is no longer than a batch can be). A batch
        // that fails its checksum with a whole batch after it is corruption of written entries.
        if (b.length - at <= this.opts.batchBytesMax && !wholeBatchAfter(b, at + 1)) {
          this.disk.truncate(path, at); // the torn tail of the last batch
          return;
        }
        throw corrupt(path, at, 'a batch fails its checksum with more data after it');
      }
      const r = new ByteReader(b, 'ERR_PERSISTENCE_CORRUPT', at + 8, at + len);
      while (r.remaining > 0) {
        const type = r.u8();
        if (type === 2) this.hard = { term: r.u64(), vote: emptyToNull(r.string(ID_BYTES_MAX, 'vote')), commit: r.u64() };
        else if (type === 1) {
          const index = r.u64();
          const term = r.u64();
          const kind = KINDS[r.u8()] ?? r.fail(`unknown entry kind at offset ${at}`);
          const data = r.bytes(this.opts.dataBytesMax, 'entry data');
          const n = r.count(MEMBERS_MAX, 'members');
          const members: string[] = [];
          for (let i = 0; i < n; i++) members.push(r.string(ID_BYTES_MAX, 'member'));
          const e: Entry = { index, term, kind, data, members: kind === 'config' ? members : null };
          const cut = entries.findIndex((x) => x.index >= index);
          if (cut >= 0) entries.length = cut;
          const last = entries.at(-1);
          if (last !== undefined && last.index + 1 !== index) throw corrupt(path, at, `entry ${index} does not follow entry ${last.index}`);
          entries.push(e);
        } else throw corrupt(path, at, `unknown record type ${type}`);
      }
      at += len;
    }
  }
}

function seal(b: Buffer): Buffer {
  b.writeUInt32BE(b.length, 0);
  b.writeUInt32BE(crc32c(b, 8, b.length), 4);
  return b;
}

function readLength(b: Uint8Array, at: number): number {
  return (((b[at] as number) << 24) | ((b[at + 1] as number) << 16) | ((b[at + 2] as number) << 8) | (b[at + 3] as number)) >>> 0;
}

/**
 * Whether a whole batch (its length in the file, its checksum right, its first record a known type)
 * starts anywhere from `from` on. Past a garbled length the next batch's offset is unknown, so every
 * offset is tried; the length and the record type rule out almost all of them before a checksum.
 */
function wholeBatchAfter(b: Uint8Array, from: number): boolean {
  for (let i = from; i + 9 <= b.length; i++) {
    const len = readLength(b, i);
    if (len < 9 || i + len > b.length) continue;
    const type = b[i + 8];
    if (type !== 1 && type !== 2) continue;
    if (checked(b, i)) return true;
  }
  return false;
}

function checked(b: Uint8Array, at: number): boolean {
  if (b.length - at < 8) return false;
  const len = readLength(b, at);
  if (len < 8 || at + len > b.length) return false;
  return readLength(b, at + 4) === crc32c(b, at + 8, at + len);
}

function emptyToNull(s: string): string | null {
  return s === '' ? null : s;
}

function corrupt(path: string, offset: number, what: string): GridError {
  return new GridError('ERR_PERSISTENCE_CORRUPT', `${path}: offset ${offset}: ${what}`);
}
