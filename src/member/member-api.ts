// The facade between HTTP and the member. Handlers see only this interface: they never reach into
// stores, sockets or config directly. Data calls are async because, once members form a cluster, a
// call for a partition owned elsewhere is forwarded over the member protocol.
import type { EndpointGroup, LogLevel } from '../config/types.js';
import type { ConsoleAccess } from '../console/access.js';
import type { MetricsSnapshot } from './metrics-snapshot.js';
import type { ClusterState, NodeState } from './states.js';
import type { CpApi } from '../cp/cp-api.js';
import type { EventDetails, EventKind } from '../util/timeline.js';
import type { ClusterViews } from '../console/cluster-views.js';

/** Who made a management call: the user (or cluster name) it carried and where it came from. */
export interface Actor {
  readonly user: string;
  readonly source: string;
}

export function describeActor(a: Actor): string {
  return `'${a.user}' from ${a.source === '' ? 'an unknown address' : a.source}`;
}

export type { ClusterState, NodeState } from './states.js';
export const REQUESTABLE_CLUSTER_STATES: readonly ClusterState[] = ['ACTIVE', 'NO_MIGRATION', 'FROZEN', 'PASSIVE'];

export interface StoredValue {
  readonly value: Buffer;
  readonly contentType: string | null;
}

/** One entry of a whole-map read: the key's stored bytes (UTF-8 of the REST key) and its value. */
export interface MapEntryRead {
  readonly key: Buffer;
  readonly value: StoredValue | null;
}

/** How a waiting poll learns that its client went away. */
export interface ClientLiveness {
  isGone(): boolean;
  /** Calls back once when the client goes away; the returned function cancels the subscription. */
  onGone(callback: () => void): () => void;
}

/**
 * A value now or later. Data calls answer synchronously when the partition is local (no promise,
 * no microtask on the hot path) and with a promise when the call has to wait or be forwarded.
 */
export type Awaitable<T> = T | Promise<T>;

/** Applies `f` now or when the value arrives. */
export function then<T, R>(value: Awaitable<T>, f: (v: T) => Awaitable<R>): Awaitable<R> {
  return value instanceof Promise ? value.then(f) : f(value);
}

export interface MemberInfo {
  readonly host: string;
  readonly port: number;
  readonly uuid: string;
  readonly liteMember: boolean;
  readonly localMember: boolean;
  readonly memberVersion: string;
}

export interface ClusterInfo {
  readonly members: readonly MemberInfo[];
  readonly connectionCount: number;
  readonly allConnectionCount: number;
}

export interface HealthInfo {
  readonly nodeState: NodeState;
  readonly clusterState: ClusterState;
  readonly clusterSafe: boolean;
  readonly migrationQueueSize: number;
  readonly clusterSize: number;
  readonly ready: boolean;
}

/** What a client-protocol connection is told about the cluster (spec/client.md). */
export interface ClientView {
  /** false until the member has joined a cluster: clients are then refused. */
  readonly joined: boolean;
  readonly memberUuid: string;
  readonly host: string;
  readonly port: number;
  /** One id for the whole cluster, the same on every member. */
  readonly clusterId: string;
  readonly partitionCount: number;
  /** Grows with every member-list change (the cluster's members version). */
  readonly membersVersion: number;
  readonly members: readonly { readonly uuid: string; readonly host: string; readonly port: number; readonly lite: boolean; readonly version: string }[];
  /** Grows with every partition table change (the table's version). */
  readonly partitionsVersion: number;
  /** Owner UUID per partition id; null while unassigned. */
  readonly owners: readonly (string | null)[];
}

export interface Credentials {
  readonly user: string;
  readonly password: string;
  /** A console session the dispatcher checked stands in for the password (security on only). */
  readonly session?: boolean;
}

export interface MemberApi {
  // Data (group DATA). Keys and names are decoded strings.
  mapGet(mapName: string, key: string): Awaitable<StoredValue | null>;
  mapPut(mapName: string, key: string, value: Buffer, contentType: string | null): Awaitable<void>;
  mapRemove(mapName: string, key: string): Awaitable<void>;
  /** A put answering the value it replaced (null: there was none). */
  mapGetAndPut(mapName: string, key: string, value: Buffer, contentType: string | null): Awaitable<StoredValue | null>;
  /** A remove answering the value it removed (null: there was none). */
  mapGetAndRemove(mapName: string, key: string): Awaitable<StoredValue | null>;
  /** Stores only when the key is absent; answers the value already there (null: it stored). */
  mapPutIfAbsent(mapName: string, key: string, value: Buffer, contentType: string | null): Awaitable<StoredValue | null>;
  mapClear(mapName: string): Awaitable<void>;
  /** Live entries of the map on the whole cluster (one read per partition, on its owner). */
  mapSize(mapName: string): Awaitable<number>;
  /** false when the queue is full. */
  queueOffer(queueName: string, value: Buffer, contentType: string | null): Awaitable<boolean>;
  /** Resolves with null when the timeout passes, the client goes away, or the member stops. */
  queuePoll(queueName: string, timeoutSeconds: number, client: ClientLiveness): Awaitable<StoredValue | null>;
  queueSize(queueName: string): Awaitable<number>;
  /** The head item, left in the queue (null: empty). */
  queuePeek(queueName: string): Awaitable<StoredValue | null>;
  /**
   * A write that names the entry's own expiry (the client protocol's put, set and putIfAbsent with a
   * TTL or max-idle): `ttlMs` and `maxIdleMs` are -1 (the map's), 0 (never) or a positive number of
   * ms. Answers as `mode` says: nothing for a set (null), the replaced value for a put, the value
   * already there for a putIfAbsent (which then stores nothing).
   */
  mapPutWithExpiry(mapName: string, key: string, value: Buffer, contentType: string | null, ttlMs: number, maxIdleMs: number, mode: 'set' | 'put' | 'putIfAbsent'): Awaitable<StoredValue | null>;
  /** Stores only when the key is present; answers the value it replaced (null: absent, nothing stored). */
  mapReplace(mapName: string, key: string, value: Buffer, contentType: string | null): Awaitable<StoredValue | null>;
  /** Stores only when the key holds `expected` (equal bytes, read as the same kind by a client: data/value-kind.ts). */
  mapReplaceIfSame(mapName: string, key: string, expected: StoredValue, value: Buffer, contentType: string | null): Awaitable<boolean>;
  /** Removes only when the key holds `expected` (as mapReplaceIfSame compares). */
  mapRemoveIfSame(mapName: string, key: string, expected: StoredValue): Awaitable<boolean>;
  /**
   * The map's live entries, read partition by partition on each owner (not one instant of the whole
   * map). `select` leaves out what is not needed (keys: value null; values: key empty). Refused with
   * ERR_DATA_ANSWER_TOO_LARGE when the answer would pass `bytesMax`.
   */
  mapEntries(mapName: string, select: 'keys' | 'values' | 'entries', bytesMax: number): Awaitable<MapEntryRead[]>;
  /**
   * An offer that waits for room up to `timeoutMs` (it offers again as polls make room); false when
   * the queue is still full then, or when the client went away first.
   */
  queueOfferWaiting(queueName: string, value: Buffer, contentType: string | null, timeoutMs: number, client: ClientLiveness): Awaitable<boolean>;
  /** Takes up to `max` items (0: all there are, within one answer's bound) from the head, in order. */
  queueDrain(queueName: string, max: number): Awaitable<StoredValue[]>;
  /** Removes every item; answers how many there were. */
  queueClear(queueName: string): Awaitable<number>;

  // Information.
  clusterInfo(): ClusterInfo;
  /** The member list and partition table as the client protocol's cluster view sends them. */
  clientView(): ClientView;
  health(): HealthInfo;
  instanceName(): string;
  clusterName(): string;
  clusterVersion(): string;
  memberVersion(): string;
  /** `[Member [h]:p - uuid this, …]\n<product version>\n<runtime version>` for the nodes call. */
  nodesText(): string;
  /** `backup`: every member copies its store to backup-dir; resolves when all are complete, or why not. */
  startBackup(by: Actor): Promise<{ ok: boolean; message: string }>;
  /** `backupInterrupt`: every member stops the backup it runs and removes its partial copy. */
  interruptBackup(by: Actor): void;
  /** `forceStart` while a recovery waits: every member wipes its store and starts over; false: no recovery. */
  forceStart(by: Actor): boolean;
  /** `partialStart` while a recovery waits (PARTIAL policies): start with the members back; false: no recovery. */
  partialStart(by: Actor): boolean;
  /** Persistence as the PERSISTENCE endpoint group sees it. */
  persistenceStatus(): { readonly enabled: boolean; readonly recovering: boolean; readonly policy: string; readonly backupDir: string };
  /** Every figure of the metrics call at this moment (metrics-snapshot.ts). */
  metricsSnapshot(): MetricsSnapshot;
  /** Puts an event on this member's part of the timeline (management calls, logins). */
  recordEvent(kind: EventKind, message: string, details?: EventDetails): void;
  /** The cluster-wide views of spec/console.md, gathered by this member from every member. */
  readonly clusterViews: ClusterViews;

  // Security and groups.
  restEnabled(): boolean;
  /** The web console at /grid/console/: whether it is on, its sessions and roles (src/console/access.ts). */
  readonly console: ConsoleAccess;
  /** grid.http.healthcheck.enabled: the HEALTH_CHECK group is served even with the REST API off. */
  healthCheckWithoutRest(): boolean;
  groupEnabled(group: EndpointGroup): boolean;
  securityEnabled(): boolean;
  /** Checks credentials as rest.md §7 says (cluster name when security is off) and audits the attempt. */
  authenticate(credentials: Credentials, endpoint: string, remoteAddress: string): boolean;
  /** Security is on and a call that needs credentials carried none: written to the audit log. */
  auditMissingCredentials(endpoint: string, remoteAddress: string): void;

  // Management. `by` says who asked, for the member's log line.
  changeClusterState(state: ClusterState, by: Actor): Promise<'changed' | 'unchanged'>;
  supportsClusterVersion(version: string): boolean;
  /** Why memberShutdown cannot hand this member's replicas off now (the cluster state), or null. */
  memberShutdownNote(): string | null;
  shutdownMember(by: Actor): void;
  shutdownCluster(by: Actor): void;
  tcpIpMemberList(): readonly string[] | null;
  setTcpIpMemberList(members: readonly string[], by: Actor): readonly string[] | null;
  runtimeLogLevel(): LogLevel | null;
  setLogLevel(level: LogLevel, by: Actor): void;
  resetLogLevel(by: Actor): void;
  cpMemberCount(): number;
  /** The CP subsystem's calls (cp-api.ts); each throws GridError as spec/cp.md names. */
  cp(): CpApi;
  /** A CP management call that changed something: a log line naming who asked. */
  auditCp(what: string, by: Actor): void;
  persistenceEnabled(): boolean;
  wanReplicationNames(): readonly string[];
  /** WAN replication on this member (wan.md); each call throws GridError (404 unknown, 409, 400). */
  wan(): WanControl;
  /** Maximum seconds a poll may wait (longer requests are capped). */
  pollTimeoutSecondsMax(): number;
}

export interface WanSyncProgressView {
  readonly stage: 'STARTED' | 'IN_PROGRESS' | 'FINISHED' | 'FAILED';
  readonly progress: number;
  readonly wanReplicationName: string;
  readonly wanPublisherId: string;
  readonly creationTime: number;
}

export interface WanCheckResultView {
  readonly stage: 'STARTED' | 'IN_PROGRESS' | 'FINISHED' | 'FAILED';
  readonly checkedPartitions: number;
  readonly diffPartitions: number;
  readonly checkedLeaves: number;
  readonly diffLeaves: number;
  readonly entriesToSync: number;
}

/** The WAN management calls of rest.md §8, as the member runs them. */
export interface WanControl {
  pause(replication: string, publisherId: string): void;
  resume(replication: string, publisherId: string): void;
  stop(replication: string, publisherId: string): void;
  clearQueues(replication: string, publisherId: string): void;
  /** sync/map (a map name) or sync/allmaps (null); returns the sync's uuid. */
  sync(replication: string, publisherId: string, mapName: string | null): string;
  consistencyCheck(replication: string, publisherId: string, mapName: string): string;
  progress(uuid: string): WanSyncProgressView | null;
  checkResult(uuid: string): WanCheckResultView | null;
  /** addWanConfig: the JSON text of one scheme; resolves once every member has it. */
  addConfig(json: string): Promise<{ addedPublisherIds: string[]; ignoredPublisherIds: string[] }>;
}
