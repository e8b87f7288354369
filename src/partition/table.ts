// The partition table: for each of `partitionCount` partitions, `width` replica slots holding member
// UUIDs (slot 0 = owner, then backups in order; null = empty). Only the master changes it; every
// change makes a new table with `version` + 1 and bumps the changed partitions' own versions. The
// stamp is a hash over the partition versions, so two members can compare tables cheaply.
// Invariants (checkTable): the replicas of a partition are distinct; filled slots come first (no
// hole before a filled slot); versions only grow.
import type { TableWire } from '../cluster/messages.js';
import { assert } from '../util/assert.js';
import { GridError } from '../util/errors.js';
import { murmurHash3x86 } from './murmur3.js';

export const REPLICA_WIDTH_MAX = 7;
const EMPTY_SLOT = 0xffff;

export type Replicas = readonly (string | null)[];

export class PartitionTable {
  constructor(
    readonly version: number,
    readonly width: number,
    /** replicas[p][i]: uuid at replica index i of partition p. */
    readonly replicas: readonly Replicas[],
    readonly partitionVersions: readonly number[],
  ) {
    assert(width >= 1 && width <= REPLICA_WIDTH_MAX, `table width ${width}`);
    assert(replicas.length === partitionVersions.length, 'one version per partition');
  }

  static empty(partitionCount: number, width: number): PartitionTable {
    const replicas: Replicas[] = [];
    for (let p = 0; p < partitionCount; p++) replicas.push(new Array<string | null>(width).fill(null));
    return new PartitionTable(0, width, replicas, new Array<number>(partitionCount).fill(0));
  }

  get partitionCount(): number {
    return this.replicas.length;
  }

  owner(partitionId: number): string | null {
    return this.replicas[partitionId]?.[0] ?? null;
  }

  /** Replica index of `uuid` in the partition, or -1. */
  indexOf(partitionId: number, uuid: string): number {
    return (this.replicas[partitionId] ?? []).indexOf(uuid);
  }

  /** True when no partition has an owner yet (before first assignment). */
  get isAssigned(): boolean {
    return this.replicas.some((r) => r[0] !== null);
  }

  /** A new table with the given partitions replaced; their versions bump, the table version + 1. */
  withReplicas(changes: ReadonlyMap<number, Replicas>): PartitionTable {
    const replicas = this.replicas.slice();
    const versions = this.partitionVersions.slice();
    for (const [p, r] of changes) {
      assert(r.length === this.width, 'replica list of the table width');
      if (sameReplicas(replicas[p] as Replicas, r)) continue;
      replicas[p] = r;
      versions[p] = (versions[p] as number) + 1;
    }
    return new PartitionTable(this.version + 1, this.width, replicas, versions);
  }

  /** MurmurHash3 over the partition versions (u32 little-endian each). */
  stamp(): number {
    const b = Buffer.allocUnsafe(this.partitionVersions.length * 4);
    this.partitionVersions.forEach((v, i) => b.writeUInt32LE(v >>> 0, i * 4));
    return murmurHash3x86(b, 0) >>> 0;
  }

  /** Members holding at least one replica. */
  members(): Set<string> {
    const out = new Set<string>();
    for (const r of this.replicas) for (const u of r) if (u !== null) out.add(u);
    return out;
  }

  toWire(): TableWire {
    const uuids: string[] = [];
    const index = new Map<string, number>();
    const slots = Buffer.alloc(this.replicas.length * this.width * 2);
    this.replicas.forEach((r, p) => {
      r.forEach((u, i) => {
        let n = EMPTY_SLOT;
        if (u !== null) {
          n = index.get(u) ?? -1;
          if (n < 0) {
            n = uuids.length;
            uuids.push(u);
            index.set(u, n);
          }
        }
        slots.writeUInt16BE(n, (p * this.width + i) * 2);
      });
    });
    const versions = Buffer.alloc(this.partitionVersions.length * 8);
    this.partitionVersions.forEach((v, p) => versions.writeDoubleBE(v, p * 8));
    return { version: this.version, width: this.width, uuids, slots, partitionVersions: versions };
  }

  /** Decodes and validates a table from a peer; ERR_PROTOCOL_MALFORMED when it breaks an invariant. */
  static fromWire(w: TableWire, partitionCount: number): PartitionTable {
    const bad = (m: string): never => {
      throw new GridError('ERR_PROTOCOL_MALFORMED', `partition table: ${m}`);
    };
    if (w.width < 1 || w.width > REPLICA_WIDTH_MAX) bad(`width ${w.width}`);
    if (w.slots.length !== partitionCount * w.width * 2) bad('slot count does not match the partition count');
    if (w.partitionVersions.length !== partitionCount * 8) bad('version count does not match the partition count');
    if (w.uuids.length >= EMPTY_SLOT) bad('too many members');
    const slots = Buffer.from(w.slots.buffer, w.slots.byteOffset, w.slots.length);
    const vb = Buffer.from(w.partitionVersions.buffer, w.partitionVersions.byteOffset, w.partitionVersions.length);
    const replicas: Replicas[] = [];
    const versions: number[] = [];
    for (let p = 0; p < partitionCount; p++) {
      const r: (string | null)[] = [];
      for (let i = 0; i < w.width; i++) {
        const n = slots.readUInt16BE((p * w.width + i) * 2);
        if (n === EMPTY_SLOT) r.push(null);
        else r.push(w.uuids[n] ?? bad(`slot refers to member ${n} of ${w.uuids.length}`));
      }
      const problem = replicaProblem(r);
      if (problem !== null) bad(`partition ${p}: ${problem}`);
      replicas.push(r);
      const v = vb.readDoubleBE(p * 8);
      if (!Number.isSafeInteger(v) || v < 0) bad(`partition ${p} version ${v}`);
      versions.push(v);
    }
    return new PartitionTable(w.version, w.width, replicas, versions);
  }
}

export function sameReplicas(a: Replicas, b: Replicas): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Why a replica list breaks the table invariants, or null. */
export function replicaProblem(r: Replicas): string | null {
  const seen = new Set<string>();
  let hole = false;
  for (const u of r) {
    if (u === null) {
      hole = true;
      continue;
    }
    if (hole) return 'a replica follows an empty slot';
    if (seen.has(u)) return `member ${u} holds two replicas`;
    seen.add(u);
  }
  return null;
}

/** Asserts the invariants of a whole table (programmer errors in the master's planning). */
export function checkTable(t: PartitionTable): void {
  t.replicas.forEach((r, p) => {
    const problem = replicaProblem(r);
    assert(problem === null, `partition ${p}: ${problem ?? ''}`);
  });
}
