// The typed, frozen configuration a member runs with. Built by src/config/load.ts from defaults <
// XML file < GRID_* environment variables < command-line flags, validated as a whole, then deep-frozen.
// Every limit carries its unit in its name.

// Log levels live with the logger (util/, below config/ in the dependency order).
export { LOG_LEVELS, type LogLevel, type LogFormat } from '../util/logger.js';
import type { LogFormat, LogLevel } from '../util/logger.js';

export const ENDPOINT_GROUPS = ['CLUSTER_READ', 'CLUSTER_WRITE', 'HEALTH_CHECK', 'PERSISTENCE', 'WAN', 'DATA', 'CP'] as const;
export type EndpointGroup = (typeof ENDPOINT_GROUPS)[number];
export type EndpointGroups = Readonly<Record<EndpointGroup, boolean>>;

export const EVICTION_POLICIES = ['NONE', 'LRU', 'LFU', 'RANDOM'] as const;
export type EvictionPolicy = (typeof EVICTION_POLICIES)[number];

export interface PortConfig {
  readonly port: number;
  readonly autoIncrement: boolean;
  /** How many ports from `port` upwards are tried when auto-increment is on. */
  readonly portCount: number;
}

export interface SslConfig {
  readonly enabled: boolean;
  readonly keyFile: string;
  readonly certFile: string;
  readonly caFile: string;
  readonly clientAuth: 'none' | 'optional' | 'required';
}

export interface TcpIpJoinConfig {
  readonly enabled: boolean;
  readonly connectionTimeoutSeconds: number;
  /** As written: `host`, `host:port` or `host:p1-p2`. */
  readonly members: readonly string[];
}

/** `<interfaces>`: which local address the member uses (src/config/bind-address.ts). */
export interface InterfacesConfig {
  readonly enabled: boolean;
  /** Patterns as written (checked at load): `10.0.*.*`, `10.3.10.4-18`, `192.168.1.7`. */
  readonly interfaces: readonly string[];
}

export interface NetworkConfig {
  readonly publicAddress: string | null;
  readonly port: PortConfig;
  readonly interfaces: InterfacesConfig;
  readonly join: { readonly tcpIp: TcpIpJoinConfig };
  /** `console`: the web console at /grid/console/ (spec/console.md), on whenever REST is on unless switched off. */
  readonly restApi: { readonly enabled: boolean; readonly groups: EndpointGroups; readonly console: { readonly enabled: boolean } };
  /** The reference's client protocol (`CP2`) on the member port (spec/client.md); on by default. */
  readonly clientProtocol: { readonly enabled: boolean };
  readonly ssl: SslConfig;
}

export interface AdvancedNetworkConfig {
  readonly enabled: boolean;
  readonly memberEndpoint: { readonly port: PortConfig } | null;
  /** A declared REST endpoint enables REST on its own port with its own groups. */
  readonly restEndpoint: { readonly port: PortConfig; readonly groups: EndpointGroups; readonly ssl: SslConfig } | null;
  readonly wanEndpoints: readonly { readonly name: string; readonly port: PortConfig }[];
}

/**
 * Merge policies a map's `merge-policy` (split-brain heal) or a `wan-replication-ref` may name;
 * `com.hazelcast.spi.merge.` before one is accepted and dropped. What each does: src/data/merge-policy.ts.
 */
export const MERGE_POLICIES = [
  'PassThroughMergePolicy',
  'PutIfAbsentMergePolicy',
  'LatestUpdateMergePolicy',
  'HigherHitsMergePolicy',
  'LatestAccessMergePolicy',
  'ExpirationTimeMergePolicy',
  'DiscardMergePolicy',
] as const;
export type MergePolicyName = (typeof MERGE_POLICIES)[number];

/** A queue item has no hits or times to compare: a queue merges by item id and bytes, or not at all. */
export const QUEUE_MERGE_POLICIES = ['PutIfAbsentMergePolicy', 'DiscardMergePolicy'] as const;
export type QueueMergePolicyName = (typeof QUEUE_MERGE_POLICIES)[number];

/** `<merge-policy batch-size="...">Name</merge-policy>`: what the smaller side's data does when a split brain heals. */
export interface MergePolicyConfig<P extends MergePolicyName = MergePolicyName> {
  readonly policy: P;
  /** Map entries per merge call (1..10000); for a queue, items handed back at once. */
  readonly batchSize: number;
}

export interface WanReplicationRefConfig {
  readonly name: string;
  /** One of MERGE_POLICIES, without a package prefix. */
  readonly mergePolicy: string;
  readonly republishingEnabled: boolean;
}

export interface MapConfig {
  /** Exact name, a pattern with one `*`, or `default`. */
  readonly name: string;
  readonly backupCount: number;
  readonly asyncBackupCount: number;
  /** 0 = entries never expire by age. */
  readonly timeToLiveSeconds: number;
  /** 0 = entries never expire by idleness. */
  readonly maxIdleSeconds: number;
  readonly eviction: { readonly policy: EvictionPolicy; readonly maxSizePolicy: 'PER_NODE'; readonly size: number };
  readonly merkleTree: { readonly enabled: boolean; readonly depth: number };
  readonly dataPersistence: { readonly enabled: boolean; readonly fsync: boolean };
  /** Split-brain heal (cluster.md "Split brain"). */
  readonly mergePolicy: MergePolicyConfig;
  readonly wanReplicationRef: WanReplicationRefConfig | null;
}

export interface QueueConfig {
  readonly name: string;
  /** 0 = unbounded. */
  readonly maxSize: number;
  readonly backupCount: number;
  readonly asyncBackupCount: number;
  /** -1 = never destroyed when empty. */
  readonly emptyQueueTtlSeconds: number;
  /** Takes effect only with `persistence enabled` (cluster.md "Persistence"). */
  readonly dataPersistence: { readonly enabled: boolean; readonly fsync: boolean };
  /** Split-brain heal: PutIfAbsent appends the smaller side's items, Discard drops them. */
  readonly mergePolicy: MergePolicyConfig<QueueMergePolicyName>;
}

export const WAN_QUEUE_FULL_BEHAVIORS = ['DISCARD_AFTER_MUTATION', 'THROW_EXCEPTION', 'THROW_EXCEPTION_ONLY_IF_REPLICATION_ACTIVE'] as const;
export const WAN_ACKNOWLEDGE_TYPES = ['ACK_ON_OPERATION_COMPLETE', 'ACK_ON_RECEIPT'] as const;
export const WAN_PUBLISHER_STATES = ['REPLICATING', 'PAUSED', 'STOPPED'] as const;
export const WAN_CONSISTENCY_CHECK_STRATEGIES = ['NONE', 'MERKLE_TREES'] as const;

/** One `batch-publisher` of a `wan-replication` scheme (wan.md "Configuration"). */
export interface WanBatchPublisherConfig {
  /** Target cluster name. */
  readonly clusterName: string;
  /** Defaults to clusterName. Unique within its scheme. */
  readonly publisherId: string;
  /** `host:port` of some target members. */
  readonly targetEndpoints: readonly string[];
  readonly batchSize: number;
  readonly batchMaxDelayMs: number;
  readonly responseTimeoutMs: number;
  readonly queueCapacity: number;
  readonly queueFullBehavior: (typeof WAN_QUEUE_FULL_BEHAVIORS)[number];
  readonly acknowledgeType: (typeof WAN_ACKNOWLEDGE_TYPES)[number];
  readonly initialPublisherState: (typeof WAN_PUBLISHER_STATES)[number];
  readonly consistencyCheckStrategy: (typeof WAN_CONSISTENCY_CHECK_STRATEGIES)[number];
}

export interface WanReplicationConfig {
  readonly name: string;
  readonly publishers: readonly WanBatchPublisherConfig[];
}

export const CLUSTER_DATA_RECOVERY_POLICIES = ['FULL_RECOVERY_ONLY', 'PARTIAL_RECOVERY_MOST_RECENT', 'PARTIAL_RECOVERY_MOST_COMPLETE'] as const;

/** `<persistence>` (cluster.md "Persistence"). Paths are as written; relative ones are relative to the working directory. */
export interface PersistenceConfig {
  readonly enabled: boolean;
  readonly baseDir: string;
  /** '' = no backup directory configured. */
  readonly backupDir: string;
  readonly validationTimeoutSeconds: number;
  readonly dataLoadTimeoutSeconds: number;
  readonly clusterDataRecoveryPolicy: (typeof CLUSTER_DATA_RECOVERY_POLICIES)[number];
  readonly autoRemoveStaleData: boolean;
}

export interface SecurityConfig {
  readonly enabled: boolean;
  readonly realms: readonly RealmConfig[];
  readonly memberAuthenticationRealm: string | null;
}

/** The console's roles: read-only changes nothing; operator changes state, WAN, log level and data; admin everything. */
export const CONSOLE_ROLES = ['admin', 'operator', 'read-only'] as const;
export type ConsoleRole = (typeof CONSOLE_ROLES)[number];

export interface RealmConfig {
  readonly name: string;
  /** `role`: what a console session of the user may do (spec/console.md "Security"); admin unless set. */
  readonly users: readonly { readonly username: string; readonly password: string; readonly role: ConsoleRole }[];
  readonly identity: { readonly username: string; readonly password: string } | null;
}

/** Typed values of the `<properties>` that the member understands. Unknown `grid.*` names are errors. */
export interface GridProperties {
  readonly partitionCount: number; // grid.partition.count
  readonly heartbeatIntervalSeconds: number; // grid.heartbeat.interval.seconds
  readonly maxNoHeartbeatSeconds: number; // grid.max.no.heartbeat.seconds
  readonly connectionMonitorIntervalMs: number; // grid.connection.monitor.interval (100 ms between counted refusals)
  readonly connectionMonitorMaxFaults: number; // grid.connection.monitor.max.faults (3 refused reconnects suspect a member)
  readonly operationCallTimeoutMs: number; // grid.operation.call.timeout.millis
  readonly cpCallTimeoutMs: number; // grid.cp.call.timeout.millis (10 s)
  readonly cpInvocationDedupeSeconds: number; // grid.cp.invocation.dedupe.seconds (300)
  readonly cpLeadershipRebalanceSeconds: number; // grid.cp.leadership.rebalance.seconds (60)
  readonly gracefulShutdownMaxWaitSeconds: number; // grid.graceful.shutdown.max.wait.seconds
  readonly restHeaderBytesMax: number; // grid.rest.header.bytes.max (16 KiB)
  readonly restBodyBytesMax: number; // grid.rest.body.bytes.max (16 MiB)
  readonly restPipelineMax: number; // grid.rest.pipeline.max (1000 requests in flight per connection)
  readonly restHeadersTimeoutSeconds: number; // grid.rest.headers.timeout.seconds (60)
  readonly restIdleTimeoutSeconds: number; // grid.rest.idle.timeout.seconds (300)
  readonly restConnectionsMax: number; // grid.rest.connections.max (10000)
  readonly queuePollTimeoutSecondsMax: number; // grid.queue.poll.timeout.seconds.max (300)
  readonly queueWaitersMax: number; // grid.queue.waiters.max (100000 waiting polls per member)
  readonly memberFrameBytesMax: number; // grid.member.frame.bytes.max (64 MiB)
  readonly clientFrameBytesMax: number; // grid.client.frame.bytes.max (16 MiB + 1 KiB): larger client frames close the connection before they are buffered
  readonly clientHeartbeatTimeoutSeconds: number; // grid.client.heartbeat.timeout.seconds (60): a client connection without traffic this long is closed
  readonly clientConnectionsMax: number; // grid.client.connections.max (10000 client connections per member)
  readonly shutdownInflightWaitSeconds: number; // grid.shutdown.inflight.wait.seconds (20: a stop without hand-off fits Kubernetes' 30 s grace)
  readonly sniffTimeoutMs: number; // grid.socket.sniff.timeout.millis (10000): first bytes must arrive by then
  readonly socketBindAny: boolean; // grid.socket.bind.any (true): false binds only the chosen address
  readonly restReadBufferShared: boolean; // grid.rest.read.buffer.shared (true): false reads HTTP through 'data' events
  readonly httpHealthcheckEnabled: boolean; // grid.http.healthcheck.enabled (false): HEALTH_CHECK served even with REST off
}

export interface Config {
  readonly clusterName: string;
  readonly instanceName: string;
  /** The `<properties>` that are not `grid.*` ones, as written (after placeholder substitution); grid.* are typed in `properties`. */
  readonly rawProperties: Readonly<Record<string, string>>;
  readonly properties: GridProperties;
  readonly liteMember: boolean;
  readonly network: NetworkConfig;
  readonly advancedNetwork: AdvancedNetworkConfig;
  readonly maps: readonly MapConfig[];
  readonly queues: readonly QueueConfig[];
  readonly wanReplications: readonly WanReplicationConfig[];
  readonly persistence: PersistenceConfig;
  readonly security: SecurityConfig;
  readonly cpSubsystem: CpSubsystemConfig;
  readonly logging: { readonly level: LogLevel; readonly format: LogFormat };
  /** Where the configuration came from, for the start-up log: a file path or 'defaults'. */
  readonly source: string;
}

/** `<cp-subsystem><raft-algorithm>` (spec/cp.md; the reference's names and defaults). */
export interface CpRaftAlgorithmConfig {
  readonly leaderElectionTimeoutInMillis: number;
  readonly leaderHeartbeatPeriodInMillis: number;
  readonly maxMissedLeaderHeartbeatCount: number;
  readonly appendRequestMaxEntryCount: number;
  readonly commitIndexAdvanceCountToSnapshot: number;
  readonly uncommittedEntryCountToRejectNewAppends: number;
  readonly appendRequestBackoffTimeoutInMillis: number;
}

export interface CpSemaphoreConfig {
  readonly name: string;
  readonly jdkCompatible: boolean;
  readonly initialPermits: number;
}

export interface CpFencedLockConfig {
  readonly name: string;
  /** 0 = unlimited re-entries. */
  readonly lockAcquireLimit: number;
}

/** `<cp-subsystem>`: cpMemberCount 0 = off. groupSize is resolved: given, or cpMemberCount minus 1 if even, at most 7. */
export interface CpSubsystemConfig {
  readonly cpMemberCount: number;
  readonly groupSize: number;
  readonly sessionTimeToLiveSeconds: number;
  readonly sessionHeartbeatIntervalSeconds: number;
  readonly missingCpMemberAutoRemovalSeconds: number;
  readonly failOnIndeterminateOperationState: boolean;
  readonly persistenceEnabled: boolean;
  readonly baseDir: string;
  readonly dataLoadTimeoutSeconds: number;
  readonly raftAlgorithm: CpRaftAlgorithmConfig;
  readonly semaphores: readonly CpSemaphoreConfig[];
  readonly locks: readonly CpFencedLockConfig[];
}
