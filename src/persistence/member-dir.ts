// Which sub-directory of `base-dir` a starting member uses (cluster.md "Persistence"): several
// members may share `base-dir`; each takes
//   1. the sub-directory whose metadata holds its own address and port, if no running process holds
//      it (with port auto-increment, the addresses it may get, in the order it tries them);
//   2. else any sub-directory with metadata that no running process holds;
//   3. else a new one, named by a new member UUID;
// and keeps the directory's lock while it runs, so two processes never use one sub-directory.
// A sub-directory without metadata is not a member's (it is left alone and reported); one whose
// metadata cannot be read stops the start with ERR_PERSISTENCE_CORRUPT naming the file, because
// it may well be this member's own data, and starting empty instead would quietly lose it.
import { GridError } from '../util/errors.js';
import { joinPath, type Disk, type DiskLock } from './disk.js';
import { METADATA_FILE, readMetadata, type MemberMetadata } from './member-metadata.js';

export interface ChosenDir {
  readonly dir: string;
  readonly lock: DiskLock;
  /** The metadata found there; null for a new directory. */
  readonly metadata: MemberMetadata | null;
  /** What was passed over, for the start-up log. */
  readonly skipped: readonly string[];
}

/**
 * Picks and locks this member's directory under `baseDir`. `owner` describes this process for the
 * lock; `newUuid` names a new directory; `ownAddresses` null: always a new directory.
 */
export function chooseMemberDir(disk: Disk, baseDir: string, ownAddresses: readonly string[] | null, owner: string, newUuid: () => string): ChosenDir {
  disk.makeDir(baseDir);
  if (ownAddresses === null) {
    // A member starting over: never another member's directory.
    const dir = joinPath(baseDir, newUuid());
    disk.makeDir(dir);
    return { dir, lock: disk.lock(dir, owner), metadata: null, skipped: [] };
  }
  const candidates: { dir: string; metadata: MemberMetadata }[] = [];
  const skipped: string[] = [];
  for (const name of disk.list(baseDir)) {
    if (name.startsWith('.')) continue;
    const dir = joinPath(baseDir, name);
    if (!disk.exists(joinPath(dir, METADATA_FILE))) {
      if (disk.list(dir).length > 0 || disk.exists(joinPath(dir, '.lock'))) skipped.push(`${dir} (no ${METADATA_FILE}: not a member's directory)`);
      continue;
    }
    const metadata = readMetadata(disk, dir);
    if (metadata === null) continue;
    candidates.push({ dir, metadata });
  }
  // Own addresses first (in the order given), then the others in name order.
  const rank = (m: MemberMetadata): number => {
    const i = ownAddresses.indexOf(m.address);
    return i < 0 ? ownAddresses.length : i;
  };
  candidates.sort((a, b) => rank(a.metadata) - rank(b.metadata) || (a.dir < b.dir ? -1 : 1));
  for (const c of candidates) {
    try {
      const lock = disk.lock(c.dir, owner);
      return { dir: c.dir, lock, metadata: c.metadata, skipped };
    } catch (e) {
      if (!(e instanceof GridError) || e.code !== 'ERR_PERSISTENCE_LOCKED') throw e;
      skipped.push(`${c.dir} (${e.message})`);
    }
  }
  const dir = joinPath(baseDir, newUuid());
  disk.makeDir(dir);
  return { dir, lock: disk.lock(dir, owner), metadata: null, skipped };
}
