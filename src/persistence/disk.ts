// The storage seam: everything the persistence code does to files goes through a Disk. The real one
// is runtime/file-disk.ts (node:fs); tests use tests/harness/sim-disk.ts, an in-memory disk that can
// lose unsynced bytes and tear the last write on a crash, fill up, and fail an fsync.
//
// Contract both keep:
// - `append` adds bytes at the end of a file (creating it); they reach "the operating system" at
//   once (a process crash keeps them) but survive a machine crash only after `sync`/`syncNow`.
// - `rename` replaces the target atomically; `syncDir` makes names created, renamed or removed in a
//   directory durable.
// - Every failure throws (or passes to `done`) a GridError ERR_PERSISTENCE_IO naming the path, or
//   ERR_PERSISTENCE_LOCKED from `lock`.

export interface DiskLock {
  release(): void;
}

export interface Disk {
  /** Names in a directory (not paths); [] when it does not exist. */
  list(dir: string): string[];
  exists(path: string): boolean;
  /** Creates a directory and its parents. */
  makeDir(dir: string): void;
  size(path: string): number;
  /** Up to `length` bytes from `offset` (fewer only at the end of the file). */
  readAt(path: string, offset: number, length: number): Uint8Array;
  readFile(path: string): Uint8Array;
  append(path: string, bytes: Uint8Array): void;
  /** Makes everything appended to `path` so far durable, then calls `done` (asynchronously). */
  sync(path: string, done: (error: Error | null) => void): void;
  /** The same, blocking: for sealing segments and metadata, not for the write path. */
  syncNow(path: string): void;
  syncDir(dir: string): void;
  rename(from: string, to: string): void;
  remove(path: string): void;
  /** Cuts a file to `length` bytes (drops a torn tail). */
  truncate(path: string, length: number): void;
  /** Closes the handle the disk keeps for `path`, if any. */
  close(path: string): void;
  /** Copies a whole file (a backup), durably. */
  copy(from: string, to: string): void;
  /**
   * Gives an immutable file a second name (a backup of a sealed segment): a hard link where the
   * file system allows it, else a durable copy.
   */
  link(from: string, to: string): void;
  /**
   * Takes the directory for this process; throws ERR_PERSISTENCE_LOCKED when a running process
   * holds it. A lock left by a process that is gone is taken over.
   */
  lock(dir: string, owner: string): DiskLock;
}

/** Joins path parts with '/', the separator both disks use. */
export function joinPath(...parts: string[]): string {
  return parts.filter((p) => p !== '').join('/').replace(/\/+/g, '/');
}
