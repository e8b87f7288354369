// The member's metadata file (cluster.md "Persistence"): who it is, its member list, its partition
// table, the cluster state to resume and its last backup number. It follows every member-list and
// table change at once (a whole-cluster restart compares the tables) and is rewritten every second
// while the member runs (its last-alive time). During a recovery the persisted table and state stay
// as they were until the cluster has resumed.
import type { MemberService, ViewChange } from '../cluster/service.js';
import type { MessageKind, TableWire } from '../cluster/messages.js';
import type { RequestableClusterState } from '../cluster/cluster-state.js';
import type { MemberMetadata } from '../persistence/member-metadata.js';
import type { NodePersistence } from '../persistence/node-persistence.js';
import type { Clock } from '../util/clock.js';

/** What the metadata is made of (the composition root passes it in). */
export interface MetadataHost {
  readonly selfUuid: string;
  readonly clusterName: string;
  readonly memberVersion: string;
  readonly partitionCount: number;
  selfAddress(): string;
  /** The member list with addresses (this member alone when it has not joined). */
  members(): { uuid: string; address: string }[];
  membersVersion(): number;
  tableWire(): TableWire;
  /** The state now, the state before the last change to PASSIVE, and whether a clusterShutdown runs. */
  state(): RequestableClusterState;
  stateBeforePassive(): RequestableClusterState;
  clusterStopping(): boolean;
  /** The state a running recovery resumes, or null. */
  resumeState(): RequestableClusterState | null;
  backupSeq(): number;
}

export class MetadataKeeper implements MemberService {
  readonly name = 'metadata';
  readonly kinds: readonly MessageKind[] = [];

  constructor(
    private readonly host: MetadataHost,
    private readonly persistence: NodePersistence | null,
    private readonly clock: Clock,
  ) {}

  /** The metadata this member persists now. */
  now(): MemberMetadata {
    const h = this.host;
    // A clusterShutdown's PASSIVE does not count: a restart resumes the state before it.
    const state = h.resumeState() ?? (h.clusterStopping() && h.state() === 'PASSIVE' ? h.stateBeforePassive() : h.state());
    return {
      memberUuid: h.selfUuid,
      address: h.selfAddress(),
      clusterName: h.clusterName,
      partitionCount: h.partitionCount,
      members: h.members(),
      membersVersion: h.membersVersion(),
      table: h.tableWire(),
      clusterState: state,
      clusterVersion: h.memberVersion,
      lastAliveMs: this.clock.nowMs(),
      backupSeq: h.backupSeq(),
    };
  }

  /** Writes the metadata file now (nothing without persistence). */
  save(): void {
    this.persistence?.writeMetadata(this.now());
  }

  /** After every view: a changed member list is persisted at once. */
  membersChanged(c: ViewChange): void {
    if (c.changed) this.save();
  }

  /** The partition table changed: persisted at once, except while a recovery keeps the old one. */
  tableApplied(): void {
    if (this.host.resumeState() === null) this.save();
  }
}
