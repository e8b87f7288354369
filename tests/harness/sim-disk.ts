// An in-memory Disk (src/persistence/disk.ts) for simulations and unit tests, with the faults a real
// disk has:
// - crash(): every file keeps what was synced, plus a random prefix of what was not (the OS wrote
//   some of it back); with `tearLastWrite`, the bytes after that prefix up to the end of one write
//   are garbage or zeros instead of missing (a torn write). Directory changes (create, rename,
//   remove) are kept: the model is a file system that journals names but not data.
// - a full disk: appends fail with ENOSPC once `capacityBytes` would be passed (nothing written).
// - failing fsync: `failSyncs` makes the next N syncs fail; the bytes stay unsynced.
// - locks: one holder per directory per "process" (a crash releases them).
// Everything is synchronous except `sync`: it makes durable what was appended when it was asked,
// and only when it completes (a microtask later, or when the given scheduler runs it), as a real
// fsync. Seeded, so a failing run replays.
import { GridError } from '../../src/util/errors.js';
import { SeededRandom } from '../../src/util/prng.js';
import type { Disk, DiskLock } from '../../src/persistence/disk.js';

interface SimFile {
  data: Uint8Array;
  length: number;
  /** Bytes known to be durable. */
  synced: number;
  /** Where each append since the last sync started (for tearing one write). */
  writes: number[];
}

export interface SimDiskOptions {
  readonly seed: number;
  readonly capacityBytes?: number;
  /** Runs an fsync's completion later (default: a microtask; a SimWorld passes its own scheduler). */
  readonly schedule?: (fn: () => void) => void;
}

export class SimDisk implements Disk {
  private readonly files = new Map<string, SimFile>();
  private readonly dirs = new Set<string>(['']);
  private readonly locks = new Map<string, string>();
  private readonly random: SeededRandom;
  capacityBytes: number;
  failSyncs = 0;
  /** Counters for checks: how many syncs ran. */
  syncs = 0;
  /** Machine crashes so far (an fsync asked for before one never completes after it). */
  private crashes = 0;

  private readonly schedule: (fn: () => void) => void;

  constructor(o: SimDiskOptions) {
    this.random = new SeededRandom(o.seed);
    this.capacityBytes = o.capacityBytes ?? Number.MAX_SAFE_INTEGER;
    this.schedule = o.schedule ?? ((fn) => queueMicrotask(fn));
  }

  usedBytes(): number {
    let n = 0;
    for (const f of this.files.values()) n += f.length;
    return n;
  }

  list(dir: string): string[] {
    const d = norm(dir);
    const out = new Set<string>();
    const prefix = d === '' ? '' : `${d}/`;
    for (const p of [...this.files.keys(), ...this.dirs]) {
      if (p === d || !p.startsWith(prefix)) continue;
      const rest = p.slice(prefix.length);
      out.add(rest.split('/')[0] as string);
    }
    return [...out].sort();
  }

  exists(path: string): boolean {
    const p = norm(path);
    return this.files.has(p) || this.dirs.has(p);
  }

  makeDir(dir: string): void {
    const parts = norm(dir).split('/');
    for (let i = 1; i <= parts.length; i++) this.dirs.add(parts.slice(0, i).join('/'));
  }

  size(path: string): number {
    return this.file(path).length;
  }

  readAt(path: string, offset: number, length: number): Uint8Array {
    const f = this.file(path);
    const end = Math.min(f.length, offset + length);
    return f.data.slice(Math.min(offset, end), end);
  }

  readFile(path: string): Uint8Array {
    const f = this.file(path);
    return f.data.slice(0, f.length);
  }

  append(path: string, bytes: Uint8Array): void {
    const p = norm(path);
    this.parentMustExist(p);
    if (this.usedBytes() + bytes.length > this.capacityBytes) throw io(p, 'ENOSPC: no space left on device');
    let f = this.files.get(p);
    if (f === undefined) this.files.set(p, (f = { data: new Uint8Array(Math.max(64, bytes.length)), length: 0, synced: 0, writes: [] }));
    if (f.length + bytes.length > f.data.length) {
      const grown = new Uint8Array(Math.max(f.data.length * 2, f.length + bytes.length));
      grown.set(f.data.subarray(0, f.length));
      f.data = grown;
    }
    f.writes.push(f.length);
    f.data.set(bytes, f.length);
    f.length += bytes.length;
  }

  sync(path: string, done: (error: Error | null) => void): void {
    // The bytes become durable when the fsync completes, not when it is asked for.
    const f = this.file(path);
    const target = f.length;
    const epoch = this.crashes;
    this.schedule(() => {
      if (this.crashes !== epoch) return; // the machine went down before this fsync completed
      let error: Error | null = null;
      try {
        if (this.files.get(norm(path)) === f) this.syncTo(f, norm(path), target);
      } catch (e) {
        error = e as Error;
      }
      done(error);
    });
  }

  private syncTo(f: SimFile, path: string, length: number): void {
    this.syncs++;
    if (this.failSyncs > 0) {
      this.failSyncs--;
      throw io(path, 'EIO: fsync failed');
    }
    if (length > f.synced) f.synced = Math.min(length, f.length);
    f.writes = f.writes.filter((w) => w >= f.synced);
  }

  syncNow(path: string): void {
    const f = this.file(path);
    this.syncTo(f, norm(path), f.length);
  }

  syncDir(dir: string): void {
    if (!this.dirs.has(norm(dir))) throw io(norm(dir), 'ENOENT: no such directory');
  }

  rename(from: string, to: string): void {
    const a = norm(from);
    const b = norm(to);
    const f = this.files.get(a);
    if (f === undefined) throw io(a, 'ENOENT: no such file');
    this.parentMustExist(b);
    this.files.delete(a);
    this.files.set(b, f);
  }

  remove(path: string): void {
    const p = norm(path);
    if (this.files.delete(p)) return;
    if (this.dirs.has(p)) {
      for (const k of [...this.files.keys()]) if (k.startsWith(`${p}/`)) this.files.delete(k);
      for (const d of [...this.dirs]) if (d === p || d.startsWith(`${p}/`)) this.dirs.delete(d);
    }
  }

  truncate(path: string, length: number): void {
    const f = this.file(path);
    f.length = Math.min(f.length, length);
    f.synced = Math.min(f.synced, f.length);
    f.writes = f.writes.filter((w) => w < f.length);
  }

  close(): void {}

  copy(from: string, to: string): void {
    const bytes = this.readFile(from);
    const b = norm(to);
    this.remove(b);
    this.append(b, bytes);
    this.syncNow(b);
  }

  link(from: string, to: string): void {
    this.copy(from, to);
  }

  lock(dir: string, owner: string): DiskLock {
    const d = norm(dir);
    const holder = this.locks.get(d);
    if (holder !== undefined && holder !== owner) throw new GridError('ERR_PERSISTENCE_LOCKED', `${d} is in use by ${holder}`);
    this.locks.set(d, owner);
    return { release: () => void (this.locks.get(d) === owner && this.locks.delete(d)) };
  }

  /**
   * The machine stops: unsynced bytes are partly lost, and with `tearLastWrite` one write is left
   * half garbage. Locks are released (their processes are gone).
   */
  crash(o: { tearLastWrite?: boolean } = {}): void {
    this.crashes++;
    for (const f of this.files.values()) {
      if (f.length === f.synced) continue;
      const keep = f.synced + this.random.nextInt(f.length - f.synced + 1);
      let end = keep;
      if (o.tearLastWrite === true && keep < f.length) {
        // The write containing `keep` is cut there and its rest filled with junk up to its end.
        const nextWrite = f.writes.find((w) => w > keep) ?? f.length;
        const zeros = this.random.nextInt(2) === 0;
        for (let i = keep; i < nextWrite; i++) f.data[i] = zeros ? 0 : this.random.nextInt(256);
        end = nextWrite;
      }
      f.length = end;
      f.synced = end;
      f.writes = [];
    }
    this.locks.clear();
  }

  /** The process stops (kill -9): appended bytes survive, locks are released. */
  processCrash(): void {
    this.locks.clear();
  }

  /** Flips one bit of a file (corruption at rest). */
  flipBit(path: string, byteOffset: number, bit: number): void {
    const f = this.file(path);
    if (byteOffset >= f.length) throw new RangeError('offset past the end of the file');
    f.data[byteOffset] = (f.data[byteOffset] as number) ^ (1 << bit);
  }

  private file(path: string): SimFile {
    const p = norm(path);
    const f = this.files.get(p);
    if (f === undefined) throw io(p, 'ENOENT: no such file');
    return f;
  }

  private parentMustExist(p: string): void {
    const parent = p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '';
    if (!this.dirs.has(parent)) throw io(p, 'ENOENT: no such directory');
  }
}

function norm(path: string): string {
  return path.replace(/\/+/g, '/').replace(/^\.\//, '').replace(/\/$/, '');
}

function io(path: string, what: string): GridError {
  return new GridError('ERR_PERSISTENCE_IO', `${path}: ${what}`);
}
