// What the WAN room asks of the member it runs in (the composition root, member/cluster-node.ts,
// provides it): the store, the cluster's identity and members, ownership, sending to members and
// running data calls, and whether this cluster takes WAN writes now.
import type { Message, OpWire } from '../cluster/messages.js';
import type { ReplicaStore } from '../data/replica-store.js';
import type { LocalResult } from '../invocation/invoker.js';

export interface WanHost {
  readonly store: ReplicaStore;
  readonly clusterName: string;
  clusterId(): string;
  joined(): boolean;
  isOwner(partitionId: number): boolean;
  /** The member owning a partition in this cluster (uuid), or null when unknown. */
  ownerOf(partitionId: number): string | null;
  /** Backup replicas of a partition (member uuids, this member excluded). */
  backupsOf(partitionId: number): string[];
  /** Every member of the cluster, this one included. */
  memberUuids(): string[];
  isMember(uuid: string): boolean;
  /** Sends to a member of this cluster (to itself: delivered asynchronously). */
  sendTo(uuid: string, m: Message): void;
  /** Runs a data call on its partition's owner in this cluster. */
  invoke(partitionId: number, op: OpWire, callback: (r: LocalResult) => void): void;
  /** Why this cluster takes no WAN writes now, or null. */
  targetRefusal(): string | null;
}
