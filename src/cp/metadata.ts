// The METADATA group's state machine: which members are CP members, which CP groups exist, and who
// is in each. Deterministic, like every state machine of a Raft group: the METADATA leader proposes
// commands, every replica applies them in log order.
//
// - Discovery: the first `cp-member-count` data members of the member list become CP members
//   (`init`, committed once; a second init is ignored and answers the first result). METADATA is the
//   first `group-size` of them; `default` is created with it, so both are listed from the start.
// - A group's id is (name, seed, id): METADATA is id 0, then ids rise; a reset raises the seed
//   (a new state machine starts from it).
// - Placement: a new group's members are the `group-size` CP members in the fewest groups (ties:
//   the order of the CP member list), so memberships spread evenly.
// - Membership of a group changes one member at a time (its own Raft); this state machine records
//   the list after each committed change (`groupMembers`), and which CP member is missing where.
// - destroy marks a group destroyed; its name can be created again later with a new id
//   (spec/cp.md: names are not tombstones).
import { ByteReader, ByteWriter } from '../util/bytes.js';

export const METADATA = 'METADATA';
export const DEFAULT_GROUP = 'default';

export interface CpMember {
  /** The CP member UUID (its own; with CP persistence it survives restarts). */
  readonly uuid: string;
  /** host:port of the member that holds it now. */
  readonly address: string;
  /** The cluster member UUID of the process that holds it (a restarted process without CP persistence is another member). */
  readonly memberUuid: string;
}

export interface CpGroupInfo {
  readonly name: string;
  readonly id: number;
  readonly seed: number;
  readonly members: readonly string[];
  readonly status: 'ACTIVE' | 'DESTROYED';
}

export type MetadataCommand =
  | { readonly kind: 'init'; readonly members: readonly CpMember[]; readonly groupSize: number }
  | { readonly kind: 'createGroup'; readonly name: string }
  | { readonly kind: 'destroyGroup'; readonly name: string }
  | { readonly kind: 'addMember'; readonly member: CpMember }
  | { readonly kind: 'removeMember'; readonly uuid: string }
  | { readonly kind: 'groupMembers'; readonly name: string; readonly id: number; readonly members: readonly string[] };

export type MetadataResult =
  | { readonly ok: true; readonly group?: CpGroupInfo }
  | { readonly ok: false; readonly code: 'unknown-group' | 'unknown-member' | 'not-initialized' | 'refused'; readonly message: string };

export class CpMetadata {
  private initialized = false;
  private groupSize = 0;
  private members: CpMember[] = [];
  private readonly groups = new Map<string, CpGroupInfo>();
  private nextId = 1;

  constructor(readonly seed: number) {}

  apply(c: MetadataCommand): MetadataResult {
    if (c.kind === 'init') return this.init(c.members, c.groupSize);
    if (!this.initialized) return { ok: false, code: 'not-initialized', message: 'CP subsystem discovery in progress' };
    switch (c.kind) {
      case 'createGroup':
        return this.createGroup(c.name);
      case 'destroyGroup': {
        const g = this.groups.get(c.name);
        if (g === undefined || g.status === 'DESTROYED') return { ok: false, code: 'unknown-group', message: `no CP group ${c.name}` };
        if (c.name === METADATA) return { ok: false, code: 'refused', message: 'the METADATA group cannot be destroyed' };
        const destroyed: CpGroupInfo = { ...g, status: 'DESTROYED' };
        this.groups.delete(c.name);
        return { ok: true, group: destroyed };
      }
      case 'addMember': {
        if (this.members.some((m) => m.uuid === c.member.uuid)) {
          this.members = this.members.map((m) => (m.uuid === c.member.uuid ? c.member : m));
          return { ok: true };
        }
        this.members.push(c.member);
        return { ok: true };
      }
      case 'removeMember': {
        if (!this.members.some((m) => m.uuid === c.uuid)) return { ok: false, code: 'unknown-member', message: `no CP member ${c.uuid}` };
        this.members = this.members.filter((m) => m.uuid !== c.uuid);
        return { ok: true };
      }
      case 'groupMembers': {
        const g = this.groups.get(c.name);
        if (g === undefined || g.id !== c.id) return { ok: false, code: 'unknown-group', message: `no CP group ${c.name} with id ${c.id}` };
        const next: CpGroupInfo = { ...g, members: [...c.members] };
        this.groups.set(c.name, next);
        return { ok: true, group: next };
      }
    }
  }

  private init(members: readonly CpMember[], groupSize: number): MetadataResult {
    if (this.initialized) return { ok: true, group: this.groups.get(METADATA) as CpGroupInfo };
    if (groupSize < 1 || members.length < groupSize) return { ok: false, code: 'refused', message: `discovery needs ${groupSize} CP members, got ${members.length}` };
    this.initialized = true;
    this.groupSize = groupSize;
    this.members = [...members];
    const meta: CpGroupInfo = { name: METADATA, id: 0, seed: this.seed, members: members.slice(0, groupSize).map((m) => m.uuid), status: 'ACTIVE' };
    this.groups.set(METADATA, meta);
    this.createGroup(DEFAULT_GROUP);
    return { ok: true, group: meta };
  }

  private createGroup(name: string): MetadataResult {
    const existing = this.groups.get(name);
    if (existing !== undefined) return { ok: true, group: existing };
    const g: CpGroupInfo = { name, id: this.nextId++, seed: this.seed, members: this.place(), status: 'ACTIVE' };
    this.groups.set(name, g);
    return { ok: true, group: g };
  }

  /** The group-size CP members in the fewest groups, ties by list order. */
  private place(): string[] {
    const load = new Map<string, number>(this.members.map((m) => [m.uuid, 0]));
    for (const g of this.groups.values()) for (const u of g.members) if (load.has(u)) load.set(u, (load.get(u) as number) + 1);
    const order = new Map(this.members.map((m, i) => [m.uuid, i]));
    return [...load.keys()]
      .sort((a, b) => (load.get(a) as number) - (load.get(b) as number) || (order.get(a) as number) - (order.get(b) as number))
      .slice(0, this.groupSize);
  }

  // ---- Reads ----------------------------------------------------------------------------------

  isInitialized(): boolean {
    return this.initialized;
  }

  cpMembers(): readonly CpMember[] {
    return this.members;
  }

  group(name: string): CpGroupInfo | undefined {
    return this.groups.get(name);
  }

  /** METADATA first, then by id. */
  groupList(): CpGroupInfo[] {
    return [...this.groups.values()].sort((a, b) => a.id - b.id);
  }

  /**
   * The next membership change a group needs, one member at a time: a member that is no CP member
   * any more goes first; then a group below its size takes the CP member in the fewest groups.
   */
  nextChange(name: string): { readonly remove: string } | { readonly add: string } | null {
    const g = this.groups.get(name);
    if (g === undefined) return null;
    const current = new Set(this.members.map((m) => m.uuid));
    const gone = g.members.find((u) => !current.has(u));
    if (gone !== undefined) return { remove: gone };
    if (g.members.length >= this.groupSize) return null;
    const load = new Map<string, number>(this.members.map((m) => [m.uuid, 0]));
    for (const x of this.groups.values()) for (const u of x.members) if (load.has(u)) load.set(u, (load.get(u) as number) + 1);
    const candidate = this.members.filter((m) => !g.members.includes(m.uuid)).sort((a, b) => (load.get(a.uuid) as number) - (load.get(b.uuid) as number))[0];
    return candidate === undefined ? null : { add: candidate.uuid };
  }

  // ---- Snapshots ------------------------------------------------------------------------------

  snapshot(): Uint8Array {
    const w = new ByteWriter(256);
    w.bool(this.initialized).u32(this.groupSize).u64(this.nextId).u32(this.members.length);
    for (const m of this.members) w.string(m.uuid, 128).string(m.address, 512).string(m.memberUuid, 128);
    w.u32(this.groups.size);
    for (const g of this.groups.values()) {
      w.string(g.name, 1024).u64(g.id).u64(g.seed).u32(g.members.length);
      for (const u of g.members) w.string(u, 128);
    }
    return w.finish();
  }

  restore(data: Uint8Array): void {
    this.groups.clear();
    this.members = [];
    this.initialized = false;
    this.nextId = 1;
    if (data.length === 0) return;
    const r = new ByteReader(data);
    this.initialized = r.bool();
    this.groupSize = r.u32();
    this.nextId = r.u64();
    const n = r.count(10_000, 'CP members');
    for (let i = 0; i < n; i++) this.members.push({ uuid: r.string(128), address: r.string(512), memberUuid: r.string(128) });
    const gs = r.count(1_000_000, 'CP groups');
    for (let i = 0; i < gs; i++) {
      const name = r.string(1024);
      const id = r.u64();
      const seed = r.u64();
      const k = r.count(16, 'group members');
      const members: string[] = [];
      for (let j = 0; j < k; j++) members.push(r.string(128));
      this.groups.set(name, { name, id, seed, members, status: 'ACTIVE' });
    }
    r.expectEnd('CP metadata snapshot');
  }
}

/**
 * A group name as a caller gives it (`name@group`): at most one `@`, trimmed; `@default` in any
 * case means the default group; `@METADATA` in any case is refused. Returns the object name and
 * the group, or an error message (REST 400, client error 23).
 */
export function parseCpName(raw: string): { readonly object: string; readonly group: string } | { readonly error: string } {
  const at = raw.indexOf('@');
  if (at < 0) return raw.trim() === '' ? { error: 'the name is empty' } : { object: raw.trim(), group: DEFAULT_GROUP };
  if (raw.indexOf('@', at + 1) >= 0) return { error: `custom CP group name must be specified at most once: ${raw}` };
  const object = raw.slice(0, at).trim();
  const group = raw.slice(at + 1).trim();
  if (object === '' || group === '') return { error: `the object and group names must not be empty: ${raw}` };
  if (group.toLowerCase() === METADATA.toLowerCase()) return { error: 'CP data structures cannot run on the METADATA CP group!' };
  return { object, group: group.toLowerCase() === DEFAULT_GROUP ? DEFAULT_GROUP : group };
}
