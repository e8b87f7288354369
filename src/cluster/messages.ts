// Every member-protocol message after the handshake: its wire number (message-types.ts keeps the
// numbers append-only) and the schema of its body (schema-codec.ts). The TypeScript types of the
// bodies are derived from the schemas, so the cores, the codec and docs/protocol.md name the same
// fields.
//
// Conventions: members are named by UUID and reached at "host:port"; `callId` correlates a request
// and its answer (0 = one-way); partition ids are u32; versions are u53 counters.
import type { Schema, TypeOf } from './protocol/schema-codec.js';
import { decodeWith, encodeWith } from './protocol/schema-codec.js';
import { GridError } from '../util/errors.js';

const MEMBER = { uuid: 'str', host: 'str', port: 'u16', lite: 'bool', version: 'str' } as const;

/** The partition table on the wire: member uuids once, then slot indices (u16 BE, 0xffff = empty). */
const TABLE = { version: 'u53', width: 'u8', uuids: ['str'], slots: 'bytes', partitionVersions: 'bytes' } as const;
/** The table's schema, for other encodings of it (the persisted member metadata). */
export const TABLE_SCHEMA = TABLE;

const VIEW = { clusterId: 'str', foundedAtMs: 'f64', membersVersion: 'u32', members: [MEMBER], table: TABLE, clusterState: 'u8', migrationQueue: 'u32' } as const;

/**
 * Who a joined member's cluster is, for split-brain merges: the side with fewer data members (tie:
 * the younger cluster, then the greater id) merges into the other. clusterId '' = not joined.
 */
const CLUSTER_INFO = { clusterId: 'str', dataMembers: 'u32', foundedAtMs: 'f64' } as const;

/** One data operation, flat: fields an operation does not use are empty (see invocation/ops.ts). */
const OP = {
  code: 'u8',
  name: 'str',
  key: 'bytes',
  value: 'bytes',
  contentType: 'strOrNull',
  timeoutMs: 'u32',
} as const;

/** What an owner applies on its backups, in partition version order. */
const BACKUP_OP = {
  code: 'u8',
  name: 'str',
  key: 'bytes',
  value: 'bytes',
  contentType: 'strOrNull',
  itemId: 'u53',
  timeMs: 'f64',
} as const;

const ENTRY = {
  map: 'str',
  key: 'bytes',
  value: 'bytes',
  contentType: 'strOrNull',
  creationTimeMs: 'f64',
  updateTimeMs: 'f64',
  lastAccessTimeMs: 'f64',
  version: 'u53',
  hits: 'u53',
  /** The record's own time-to-live and max-idle (ms; -1 = the map's, 0 = never: data/expiry.ts). */
  ttlMs: 'f64',
  maxIdleMs: 'f64',
} as const;

const QUEUE = { name: 'str', nextItemId: 'u53', items: [{ id: 'u53', value: 'bytes', contentType: 'strOrNull' }] } as const;

/**
 * One WAN event (wan.md "Events and queues"): a map write of one partition, with the entry's
 * metadata for puts. `kind`: 1 put, 2 remove, 3 clear (key empty), 4 sync put (full or delta sync).
 * `version` is the source partition's data version of the write (of the snapshot, for sync puts);
 * `policy` the merge-policy code (merge-policy.ts) the target applies; `origin` the cluster the write
 * was first made in.
 */
const WAN_EVENT = {
  partitionId: 'u32',
  version: 'u53',
  kind: 'u8',
  map: 'str',
  key: 'bytes',
  value: 'bytes',
  contentType: 'strOrNull',
  creationTimeMs: 'f64',
  updateTimeMs: 'f64',
  lastAccessTimeMs: 'f64',
  entryVersion: 'u53',
  hits: 'u53',
  /** The entry's own time-to-live and max-idle (as ENTRY's). */
  ttlMs: 'f64',
  maxIdleMs: 'f64',
  policy: 'u8',
  origin: 'str',
} as const;

/** Part of one partition's WAN queue for one publisher ("replication/publisherId"), in queue order. */
const WAN_QUEUE = { publisher: 'str', events: [WAN_EVENT] } as const;

export const MESSAGE_SCHEMAS = {
  /**
   * Joiner → any configured address: "who is master; let me in". `cluster` is empty (clusterId
   * '') for a joiner; split-brain probes are mergeProbe.
   * `reset`: the joiner was in a cluster and left it (cut off, or merging), dropping its data; a
   * master that still lists it removes it before admitting it anew.
   */
  joinRequest: { member: MEMBER, cluster: CLUSTER_INFO, reset: 'bool' },
  /** Answer to joinRequest (where the master is, a refusal, or "you are in my batch"), with the answerer's cluster. */
  joinAnswer: { masterAddress: 'str', joined: 'bool', uuid: 'str', address: 'str', refusal: 'str', cluster: CLUSTER_INFO },
  /**
   * Split-brain probe: a master → an address outside its member list. `probeId` is the prober's
   * round (it acts only on answers to its latest round that come back quickly).
   */
  mergeProbe: { member: MEMBER, cluster: CLUSTER_INFO, probeId: 'u53' },
  /** Answer to mergeProbe from a joined member: where its master is (itself, when it is) and its cluster now. */
  mergeProbeAnswer: { probeId: 'u53', uuid: 'str', address: 'str', masterAddress: 'str', cluster: CLUSTER_INFO },
  /** Master of the smaller side of a split brain → its members: leave and join the master at `masterAddress`. */
  mergeTo: { masterAddress: 'str', reason: 'str' },
  /** Master → admitted joiner, and master → every member after a change: the whole view. */
  membersView: VIEW,
  heartbeat: { membersVersion: 'u32', masterUuid: 'str', suspects: ['str'] },
  /** A would-be master asks a member to accept its mastership and send its view. */
  claimRequest: { candidateUuid: 'str' },
  claimAnswer: { accepted: 'bool', view: VIEW },
  /**
   * The master publishes the partition table alone (after a migration or promotion).
   * `membersVersion`: the member list it was made under; a member holding another list ignores it
   * (the view it missed, which the master sends again, carries the table).
   */
  partitionTable: { table: TABLE, migrationQueue: 'u32', membersVersion: 'u32' },
  /** A forwarded data operation; answered by invokeResult with the same callId. */
  invoke: { partitionId: 'i32', op: OP },
  invokeResult: {
    status: 'u8',
    found: 'bool',
    value: 'bytes',
    contentType: 'strOrNull',
    count: 'u53',
    errorCode: 'str',
    message: 'str',
    retryAfterSeconds: 'u32',
  },
  /** Owner → backup: one write, to apply at `version` (the partition's data version after it). */
  backup: { partitionId: 'u32', version: 'u53', op: BACKUP_OP },
  backupAck: { partitionId: 'u32', version: 'u53' },
  /** Anti-entropy: an owner's data versions for partitions the receiver backs up. */
  versions: { partitionIds: ['u32'], versions: ['u53'] },
  /** A backup that missed writes asks the owner for the whole partition. */
  resyncRequest: { partitionId: 'u32' },
  /** One bounded chunk of a partition's data (migration or resync), acked by snapshotAck. */
  snapshotChunk: {
    transferId: 'u53',
    partitionId: 'u32',
    version: 'u53',
    index: 'u32',
    last: 'bool',
    entries: [ENTRY],
    queues: [QUEUE],
    /** The partition's WAN queues (their events in order; one queue may span chunks). */
    wan: [WAN_QUEUE],
    /** WAN target: the highest source version applied per source stream (the last chunk carries them). */
    wanMarks: [{ source: 'str', version: 'u53' }],
  },
  snapshotAck: { transferId: 'u53', index: 'u32', ok: 'bool' },
  /** Master → source (the partition's owner): copy partition to destination. */
  migrateRequest: { migrationId: 'u53', partitionId: 'u32', destinations: ['str'], tableVersion: 'u53' },
  /** Source → master: the copy is complete (destination in sync, writes held) or failed. */
  migrateResult: { migrationId: 'u53', ok: 'bool', message: 'str', version: 'u53' },
  /** Master → destination: the move is final; destination → master: committed. */
  migrateCommit: { migrationId: 'u53', partitionId: 'u32', version: 'u53' },
  migrateCommitAck: { migrationId: 'u53', ok: 'bool' },
  /** Master → source: the move failed or was abandoned; release held writes. */
  migrateAbort: { migrationId: 'u53', partitionId: 'u32' },
  /** A leaving member → master, repeated until answered with shutdownAllowed. */
  shutdownRequest: { uuid: 'str' },
  shutdownAllowed: { uuid: 'str' },
  /** A leaving member → master, after shutdownAllowed, once its clients have moved away: remove it now. */
  departing: { uuid: 'str' },
  /** Cluster-state change, two phases. */
  stateLock: { txId: 'str', state: 'u8', membersVersion: 'u32', tableVersion: 'u53', leaseMs: 'u32' },
  stateLockAnswer: { txId: 'str', ok: 'bool', message: 'str' },
  stateCommit: { txId: 'str', state: 'u8' },
  stateRollback: { txId: 'str' },
  /** clusterShutdown: every member stops; a call id asks for shutdownMemberAck. */
  shutdownMember: { reason: 'str' },
  /** A member got shutdownMember (by its call id) and is stopping. */
  shutdownMemberAck: { uuid: 'str' },
  /** POST config/tcp-ip/member-list through one member: every member takes the new join list. */
  memberListSet: { members: ['str'] },
  /** A non-master whose reconnects to a member were refused tells the master (it decides). */
  memberSuspected: { uuid: 'str', reason: 'str' },
  /** The caller's client went away: stop a waiting poll (by the invoke's callId). */
  pollCancel: { callId: 'u53' },
  /** Master → a member that is not in its member list: you were removed; rejoin. */
  notMember: { membersVersion: 'u32' },
  /**
   * WAN source member → a target cluster's member: events of some partitions, each partition's in
   * source order. Answered by wanBatchAck with the same callId (after applying them, or on receipt).
   */
  wanBatch: {
    sourceCluster: 'str',
    /** The source cluster's id: the target keeps per-partition order per source cluster. */
    sourceClusterId: 'str',
    replication: 'str',
    publisherId: 'str',
    ackOnReceipt: 'bool',
    events: [WAN_EVENT],
  },
  /**
   * `owners`: the batch's partitions that the answering member does not own, with their owner in its
   * cluster, so the publisher sends them to that member next time (no forwarding on the target).
   */
  wanBatchAck: { ok: 'bool', message: 'str', owners: [{ partitionId: 'u32', uuid: 'str' }] },
  /** A partition owner → its backups: events up to these versions reached the target; drop them. */
  wanAcked: { publisher: 'str', partitionIds: ['u32'], versions: ['u53'] },
  /**
   * The coordinator of a sync (or consistency check) → every member: sync the partitions you own.
   * `maps` empty with `allMaps` = every map whose wan-replication-ref names the replication.
   */
  wanSyncStart: { syncId: 'str', kind: 'u8', replication: 'str', publisherId: 'str', maps: ['str'], allMaps: 'bool', creationTimeMs: 'f64', total: 'u32' },
  /** A member → every member: partitions of a sync it started, finished, or failed (with the reason). */
  wanSyncReport: {
    syncId: 'str',
    kind: 'u8',
    replication: 'str',
    publisherId: 'str',
    creationTimeMs: 'f64',
    total: 'u32',
    started: ['u32'],
    done: ['u32'],
    /** Partitions it started and no longer runs (they moved to another member, which takes them over). */
    released: ['u32'],
    failure: 'str',
    /** Consistency checks: the counts of the partitions in `done` (diff partitions, leaves checked and differing, entries to sync). */
    diffPartitions: 'u32',
    checkedLeaves: 'u53',
    diffLeaves: 'u53',
    entriesToSync: 'u53',
    /** What the sender knows of the whole record (periodic gossip, or told to a joiner): counts are totals, started/released empty. */
    gossip: 'bool',
  },
  /**
   * WAN source member → a target member, for a consistency check or delta sync of one partition:
   * the target's Merkle-tree node hashes (`request`: LEAF_DIGESTS/MERKLE_NODES payload of
   * replica-store.ts, `digests` false) or per-entry digests under leaves (`digests` true), read on
   * the partition's owner there. Answered by wanMerkleAnswer with the same callId.
   */
  wanMerkleRequest: { map: 'str', partitionId: 'u32', digests: 'bool', request: 'bytes' },
  wanMerkleAnswer: { ok: 'bool', message: 'str', answer: 'bytes' },
  /**
   * addWanConfig through one member: every member (and later joiners) merges these schemes (JSON).
   * With a call id, the receiver answers wanConfigAck once it has them.
   */
  wanConfigAdd: { schemes: ['str'] },
  wanConfigAck: { uuid: 'str' },
  /**
   * Persistence, whole-cluster restart: a member that loaded its log → its master, on every view
   * while recovery lasts: the partition table it persisted (version and stamp).
   */
  recoveryReport: { tableVersion: 'u53', tableStamp: 'u32' },
  /** The master → every member: recovery is over; resume this cluster state (STATE_CODES). */
  recoveryDone: { state: 'u8' },
  /** Persistence `backup` through one member → every member: copy your store to backup-<seq>. */
  backupStart: { seq: 'u53' },
  /** A member → the member coordinating backup `seq`: done (ok) or why not; `lastSeq`: its last backup. */
  backupResult: { seq: 'u53', ok: 'bool', message: 'str', lastSeq: 'u53' },
  /** `backupInterrupt` through one member → every member: stop the backup running, remove its partial copy. */
  backupInterrupt: {},
  /** `forceStart` through one member → every member while a recovery waits: wipe your store, start over as a new member. */
  forceStart: {},
  /** The master → a recovering member whose data the cluster has gone on without: it is stale. */
  recoveryStale: { reason: 'str' },
  /** `partialStart` through one member → its master: start now with the members that are back. */
  partialStart: {},
  /** CP: one Raft message of the CP group (seed, id) between two of its members (src/cp/raft/wire.ts layout). */
  cpRaft: { seed: 'u53', groupId: 'u53', raft: 'bytes' },
  /**
   * CP: a call for group (name, seed, id) to the member believed to hold its leader (src/cp/call-wire.ts
   * layout in `payload`; `waitMs`: how long a blocking call may wait there). Answered by cpAnswer.
   */
  cpCall: { group: 'str', seed: 'u53', groupId: 'u53', write: 'bool', invocation: 'str', payload: 'bytes', waitMs: 'u32' },
  /** CP: a call's outcome: ok with the answer (`result`) at log `index`, or a failure code and the leader known there. */
  cpAnswer: { ok: 'bool', failure: 'str', leader: 'str', index: 'u53', result: 'bytes' },
  /** CP discovery, the master → every member: the CP members (in order, METADATA is the first `groupSize`) for `seed`. */
  cpDiscover: { seed: 'u53', groupSize: 'u8', members: [{ uuid: 'str', address: 'str', memberUuid: 'str' }] },
  /** CP: the METADATA leader → every member: the CP members and groups (src/cp/metadata.ts snapshot) at METADATA's log `index`. */
  cpView: { seed: 'u53', term: 'u53', index: 'u53', metadata: 'bytes' },
  /** CP reset, the master → every member: drop every CP group, session and structure; discovery runs again with `seed`. */
  cpReset: { seed: 'u53' },
  /**
   * Console views (spec/console.md): one member asks another for its part of a cluster-wide view
   * (`view` names it, `query` is its JSON parameters). Answered by viewAnswer.
   */
  viewAsk: { view: 'str', query: 'str' },
  /** A view's part as UTF-8 JSON in `body`; ok false: the reason, as text. */
  viewAnswer: { ok: 'bool', body: 'bytes' },
} as const satisfies Record<string, Schema>;

export type MessageKind = keyof typeof MESSAGE_SCHEMAS;
export type Body<K extends MessageKind> = TypeOf<(typeof MESSAGE_SCHEMAS)[K]>;
export type MemberWire = TypeOf<typeof MEMBER>;
export type TableWire = TypeOf<typeof TABLE>;
export type ViewWire = TypeOf<typeof VIEW>;
export type OpWire = TypeOf<typeof OP>;
export type BackupOpWire = TypeOf<typeof BACKUP_OP>;
export type EntryWire = TypeOf<typeof ENTRY>;
export type QueueWire = TypeOf<typeof QUEUE>;
export type WanEventWire = TypeOf<typeof WAN_EVENT>;
export type WanQueueWire = TypeOf<typeof WAN_QUEUE>;

/** A message as the cores see it: kind, call id, and typed body. */
export type Message = { [K in MessageKind]: { readonly kind: K; readonly callId: number; readonly body: Body<K> } }[MessageKind];
export type MessageOf<K extends MessageKind> = Extract<Message, { kind: K }>;

/** Wire numbers: append-only (1 and 2 are the handshake, handshake.ts). */
export const MESSAGE_TYPES: Readonly<Record<MessageKind, number>> = {
  joinRequest: 3,
  joinAnswer: 4,
  membersView: 5,
  heartbeat: 6,
  claimRequest: 7,
  claimAnswer: 8,
  partitionTable: 9,
  invoke: 10,
  invokeResult: 11,
  backup: 12,
  backupAck: 13,
  versions: 14,
  resyncRequest: 15,
  snapshotChunk: 16,
  snapshotAck: 17,
  migrateRequest: 18,
  migrateResult: 19,
  migrateCommit: 20,
  migrateCommitAck: 21,
  migrateAbort: 22,
  shutdownRequest: 23,
  shutdownAllowed: 24,
  stateLock: 25,
  stateLockAnswer: 26,
  stateCommit: 27,
  stateRollback: 28,
  shutdownMember: 29,
  pollCancel: 30,
  notMember: 31,
  mergeTo: 32,
  shutdownMemberAck: 33,
  memberListSet: 34,
  memberSuspected: 35,
  wanBatch: 36,
  wanBatchAck: 37,
  wanAcked: 38,
  wanSyncStart: 39,
  wanSyncReport: 40,
  wanConfigAdd: 41,
  wanMerkleRequest: 42,
  wanMerkleAnswer: 43,
  wanConfigAck: 44,
  recoveryReport: 45,
  recoveryDone: 46,
  backupStart: 47,
  backupResult: 48,
  backupInterrupt: 49,
  forceStart: 50,
  recoveryStale: 51,
  partialStart: 52,
  departing: 53,
  mergeProbe: 54,
  mergeProbeAnswer: 55,
  cpRaft: 56,
  cpCall: 57,
  cpAnswer: 58,
  cpDiscover: 59,
  cpView: 60,
  cpReset: 61,
  viewAsk: 62,
  viewAnswer: 63,
};

const KIND_BY_TYPE = new Map<number, MessageKind>(Object.entries(MESSAGE_TYPES).map(([k, v]) => [v, k as MessageKind]));

/** Heartbeats and membership control go before data on a busy connection. */
export const URGENT_KINDS: ReadonlySet<MessageKind> = new Set(['heartbeat', 'membersView', 'claimRequest', 'claimAnswer', 'notMember', 'mergeTo']);

export function messageKindOf(type: number): MessageKind | null {
  return KIND_BY_TYPE.get(type) ?? null;
}

export function encodeBody(message: Message): Buffer {
  const schema = MESSAGE_SCHEMAS[message.kind] as Schema;
  return encodeWith(schema, message.body as never, message.kind === 'snapshotChunk' || message.kind === 'wanBatch' ? 64 * 1024 : 128);
}

/** Decodes a frame's payload; an unknown type or a malformed body is ERR_PROTOCOL_MALFORMED. */
const VIEWS = { views: true } as const;

export function decodeMessage(type: number, callId: number, payload: Uint8Array): Message {
  const kind = messageKindOf(type);
  if (kind === null) throw new GridError('ERR_PROTOCOL_MALFORMED', `unknown message type ${type}`);
  // A WAN batch's keys and values are views into the frame (a buffer of its own, never reused): the
  // target copies what it keeps (merge calls, the store), so they are not copied once per event here.
  const body = decodeWith(MESSAGE_SCHEMAS[kind] as Schema, payload, kind, kind === 'wanBatch' ? VIEWS : undefined);
  return { kind, callId, body } as Message;
}

export function message<K extends MessageKind>(kind: K, body: Body<K>, callId = 0): MessageOf<K> {
  return { kind, callId, body } as unknown as MessageOf<K>;
}
