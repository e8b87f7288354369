// CP persistence on a CP member's disk (spec/cp.md "CP persistence"): who this member is in the CP
// subsystem, and one RaftStore (raft-store.ts) per group it holds. I/O only through a Disk, so the
// simulated disk can stand in for the file system.
//
// Layout under `base-dir`:
//   <cp-member-uuid>/member        this member's CP identity: JSON {cpUuid, address, seed,
//                                  groupSize, members} (the discovery it took part in), written to
//                                  member.tmp, fsynced and renamed over
//   <cp-member-uuid>/<group-id>/   the group's term, vote, log and snapshot (raft-store.ts)
// Several members may share one base-dir (one machine): each finds its directory by the address it
// recorded. A malformed identity or group directory stops the member naming the file (and, for a
// log, the offset): a CP member that forgot a vote or an entry must not take part in Raft.
import { GridError } from '../util/errors.js';
import { joinPath } from '../persistence/disk.js';
import type { Disk } from '../persistence/disk.js';
import { RaftStore } from './raft-store.js';
import type { CpMember } from './metadata.js';
import type { RaftRestored } from './raft/core.js';

export interface CpIdentity {
  readonly cpUuid: string;
  readonly address: string;
  readonly seed: number;
  /** The discovery this member took part in (its seed's CP members and group size). */
  readonly groupSize: number;
  readonly members: readonly CpMember[];
}

const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const MEMBER_FILE = 'member';

export interface CpPersistenceOptions {
  readonly batchBytesMax: number;
  readonly dataBytesMax: number;
}

export class CpPersistence {
  constructor(
    private readonly disk: Disk,
    readonly baseDir: string,
    /** This member's address as the CP subsystem writes it (`[host]:port`). */
    private readonly address: () => string,
    private readonly opts: CpPersistenceOptions,
  ) {}

  /** This member's CP identity (the directory that recorded its address), or null for none. */
  load(): CpIdentity | null {
    if (!this.disk.exists(this.baseDir)) return null;
    const found: CpIdentity[] = [];
    for (const name of this.disk.list(this.baseDir)) {
      if (!UUID_RE.test(name)) continue;
      const file = joinPath(joinPath(this.baseDir, name), MEMBER_FILE);
      if (!this.disk.exists(file)) continue;
      const id = parseIdentity(this.disk.readFile(file), file);
      if (id.cpUuid !== name) throw new GridError('ERR_PERSISTENCE_CORRUPT', `${file}: names CP member ${id.cpUuid}, but its directory is ${name}`);
      if (id.address === this.address()) found.push(id);
    }
    if (found.length > 1) throw new GridError('ERR_PERSISTENCE_CORRUPT', `${this.baseDir}: ${found.length} CP member directories record the address ${this.address()} (${found.map((f) => f.cpUuid).join(', ')}); keep one`);
    return found[0] ?? null;
  }

  /**
   * This member's identity and every group directory it holds, read and checked (a malformed one
   * throws, naming the file and offset); null when this member has no CP directory.
   */
  restore(): { readonly identity: CpIdentity; readonly groups: Map<number, { store: RaftStore; restored: RaftRestored }> } | null {
    const identity = this.load();
    if (identity === null) return null;
    const groups = new Map<number, { store: RaftStore; restored: RaftRestored }>();
    for (const gid of this.groupIds(identity.cpUuid)) {
      const store = this.store(identity.cpUuid, gid);
      const restored = store.load();
      if (restored !== null) groups.set(gid, { store, restored });
    }
    return { identity, groups };
  }

  /** Records the identity durably (before this member acts as that CP member). */
  save(id: CpIdentity): void {
    const dir = this.dirOf(id.cpUuid);
    this.disk.makeDir(dir);
    const tmp = joinPath(dir, `${MEMBER_FILE}.tmp`);
    if (this.disk.exists(tmp)) this.disk.remove(tmp);
    this.disk.append(tmp, Buffer.from(JSON.stringify(id)));
    this.disk.syncNow(tmp);
    this.disk.close(tmp);
    this.disk.rename(tmp, joinPath(dir, MEMBER_FILE));
    this.disk.syncDir(dir);
  }

  /** The group ids this CP member has directories for. */
  groupIds(cpUuid: string): number[] {
    return this.disk
      .list(this.dirOf(cpUuid))
      .filter((n) => /^\d{1,15}$/.test(n))
      .map(Number)
      .sort((a, b) => a - b);
  }

  store(cpUuid: string, groupId: number): RaftStore {
    return new RaftStore(this.disk, joinPath(this.dirOf(cpUuid), String(groupId)), this.opts);
  }

  /** A group this member no longer holds: its directory goes. */
  removeGroup(cpUuid: string, groupId: number): void {
    this.removeTree(joinPath(this.dirOf(cpUuid), String(groupId)));
  }

  /** A reset (or a CP member removed for good): everything of this CP member goes. */
  removeMember(cpUuid: string): void {
    this.removeTree(this.dirOf(cpUuid));
  }

  private dirOf(cpUuid: string): string {
    return joinPath(this.baseDir, cpUuid);
  }

  private removeTree(path: string): void {
    // Disk.remove takes a directory with what it holds.
    if (this.disk.exists(path)) this.disk.remove(path);
  }
}

function parseIdentity(bytes: Uint8Array, file: string): CpIdentity {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch (e) {
    throw new GridError('ERR_PERSISTENCE_CORRUPT', `${file}: not a CP member identity (${(e as Error).message}); the member stops rather than take part in Raft without what it promised`);
  }
  const o = v as Partial<CpIdentity> | null;
  const members = Array.isArray(o?.members) ? o.members : null;
  const ok =
    o !== null &&
    typeof o === 'object' &&
    typeof o.cpUuid === 'string' &&
    UUID_RE.test(o.cpUuid) &&
    typeof o.address === 'string' &&
    Number.isSafeInteger(o.seed) &&
    Number.isSafeInteger(o.groupSize) &&
    members !== null &&
    members.every((m) => typeof m?.uuid === 'string' && typeof m.address === 'string' && typeof m.memberUuid === 'string');
  if (!ok) throw new GridError('ERR_PERSISTENCE_CORRUPT', `${file}: a CP member identity with missing or malformed fields`);
  return { cpUuid: o.cpUuid as string, address: o.address as string, seed: o.seed as number, groupSize: o.groupSize as number, members: members as CpMember[] };
}
