// The configuration while it is being built: a mutable twin of Config, filled with the built-in
// defaults, then overwritten by the XML file, the environment and the flags, in that order, then
// validated and frozen into a Config. Alongside it, `origins` remembers where the latest value of
// each validated item came from, so a rule that spans values (backup + async <= 6) can still name a
// file position, a variable or a flag.
import type {
  Config,
  CpSubsystemConfig,
  EndpointGroups,
  MapConfig,
  PersistenceConfig,
  PortConfig,
  QueueConfig,
  SslConfig,
  WanBatchPublisherConfig,
  WanReplicationConfig,
  WanReplicationRefConfig,
} from './types.js';
import { defaultGridProperties } from './properties.js';

export type DeepMutable<T> = T extends readonly (infer U)[]
  ? DeepMutable<U>[]
  : T extends object
    ? { -readonly [K in keyof T]: DeepMutable<T[K]> }
    : T;

export type Draft = DeepMutable<Config>;
export type MapDraft = DeepMutable<MapConfig>;
export type QueueDraft = DeepMutable<QueueConfig>;
export type WanSchemeDraft = DeepMutable<WanReplicationConfig>;
export type WanPublisherDraft = DeepMutable<WanBatchPublisherConfig>;

/** Item key → where its current value came from (`file:line:column`, `environment variable X`, `flag --x`). */
export type Origins = Map<string, string>;

export function defaultCpSubsystem(): DeepMutable<CpSubsystemConfig> {
  return {
    cpMemberCount: 0,
    // 0 until validation resolves it: the given size, else cp-member-count (minus 1 if even, at most 7).
    groupSize: 0,
    sessionTimeToLiveSeconds: 300,
    sessionHeartbeatIntervalSeconds: 5,
    missingCpMemberAutoRemovalSeconds: 14_400,
    failOnIndeterminateOperationState: false,
    persistenceEnabled: false,
    baseDir: 'cp-data',
    dataLoadTimeoutSeconds: 120,
    raftAlgorithm: {
      leaderElectionTimeoutInMillis: 2000,
      leaderHeartbeatPeriodInMillis: 5000,
      maxMissedLeaderHeartbeatCount: 5,
      appendRequestMaxEntryCount: 100,
      commitIndexAdvanceCountToSnapshot: 10_000,
      uncommittedEntryCountToRejectNewAppends: 100,
      appendRequestBackoffTimeoutInMillis: 100,
    },
    semaphores: [],
    locks: [],
  };
}

/** Origin keys, kept in one place so writers and the validator agree. */
export const originKey = {
  map: (name: string) => `map:${name}`,
  queue: (name: string) => `queue:${name}`,
  wanRef: (mapName: string) => `wan-ref:${mapName}`,
  property: (key: string) => `property:${key}`,
  security: 'security',
  memberAuthentication: 'security:member-authentication',
  networkSsl: 'ssl:network',
  restSsl: 'ssl:rest',
  cp: 'cp',
  persistence: 'persistence',
  wan: (name: string) => `wan:${name}`,
  wanPublisher: (scheme: string, publisherId: string) => `wan:${scheme}:publisher:${publisherId}`,
  advancedNetwork: 'advanced-network',
  interfaces: 'network:interfaces',
} as const;

export const DEFAULT_PORT = 5701;
/** `merge-policy@batch-size` when not given (the reference's default). */
export const MERGE_BATCH_SIZE_DEFAULT = 100;
export const DEFAULT_PORT_COUNT = 100;

export function defaultPort(port = DEFAULT_PORT): DeepMutable<PortConfig> {
  return { port, autoIncrement: true, portCount: DEFAULT_PORT_COUNT };
}

export function defaultGroups(): DeepMutable<EndpointGroups> {
  return { CLUSTER_READ: true, CLUSTER_WRITE: false, HEALTH_CHECK: true, PERSISTENCE: false, WAN: false, DATA: false, CP: false };
}

export function defaultSsl(): DeepMutable<SslConfig> {
  return { enabled: false, keyFile: '', certFile: '', caFile: '', clientAuth: 'none' };
}

/** A map declared without children: the reference's MapConfig defaults (not the `default` map's values). */
export function defaultMap(name: string): MapDraft {
  return {
    name,
    backupCount: 1,
    asyncBackupCount: 0,
    timeToLiveSeconds: 0,
    maxIdleSeconds: 0,
    eviction: { policy: 'NONE', maxSizePolicy: 'PER_NODE', size: 2147483647 },
    merkleTree: { enabled: false, depth: 10 },
    dataPersistence: { enabled: false, fsync: false },
    mergePolicy: { policy: 'PutIfAbsentMergePolicy', batchSize: MERGE_BATCH_SIZE_DEFAULT },
    wanReplicationRef: null,
  };
}

export function defaultQueue(name: string): QueueDraft {
  return {
    name,
    maxSize: 0,
    backupCount: 1,
    asyncBackupCount: 0,
    emptyQueueTtlSeconds: -1,
    dataPersistence: { enabled: false, fsync: false },
    mergePolicy: { policy: 'PutIfAbsentMergePolicy', batchSize: MERGE_BATCH_SIZE_DEFAULT },
  };
}

/**
 * A `<batch-publisher>` with nothing set: the reference's defaults (wan.md "Configuration"). The id
 * is '' here, meaning "not given": whoever reads a publisher sets it (to the cluster name when the
 * source has no id of its own). Target endpoints have no default; every source requires them.
 */
export function defaultPublisher(): WanPublisherDraft {
  return {
    clusterName: 'dev',
    publisherId: '',
    targetEndpoints: [],
    batchSize: 500,
    batchMaxDelayMs: 1000,
    responseTimeoutMs: 60000,
    queueCapacity: 10000,
    queueFullBehavior: 'DISCARD_AFTER_MUTATION',
    acknowledgeType: 'ACK_ON_OPERATION_COMPLETE',
    initialPublisherState: 'REPLICATING',
    consistencyCheckStrategy: 'NONE',
  };
}

/** `<wan-replication-ref>` with only its name: PassThroughMergePolicy, republishing on (the reference's defaults). */
export function defaultWanRef(name: string): DeepMutable<WanReplicationRefConfig> {
  return { name, mergePolicy: 'PassThroughMergePolicy', republishingEnabled: true };
}

export function defaultPersistence(): DeepMutable<PersistenceConfig> {
  return {
    enabled: false,
    baseDir: 'persistence',
    backupDir: '',
    validationTimeoutSeconds: 120,
    dataLoadTimeoutSeconds: 900,
    clusterDataRecoveryPolicy: 'FULL_RECOVERY_ONLY',
    autoRemoveStaleData: true,
  };
}

/**
 * The built-in defaults. `instanceName` is '' here, meaning "not given": the loader generates one
 * after every source had its say (a given name can never be '', names must be non-empty).
 */
export function defaultDraft(): Draft {
  return {
    clusterName: 'dev',
    instanceName: '',
    rawProperties: {},
    properties: defaultGridProperties(),
    liteMember: false,
    network: {
      publicAddress: null,
      port: defaultPort(),
      interfaces: { enabled: false, interfaces: [] },
      join: { tcpIp: { enabled: false, connectionTimeoutSeconds: 5, members: [] } },
      restApi: { enabled: false, groups: defaultGroups(), console: { enabled: true } },
      clientProtocol: { enabled: true },
      ssl: defaultSsl(),
    },
    advancedNetwork: { enabled: false, memberEndpoint: null, restEndpoint: null, wanEndpoints: [] },
    maps: [defaultMap('default')],
    queues: [defaultQueue('default')],
    wanReplications: [],
    persistence: defaultPersistence(),
    security: { enabled: false, realms: [], memberAuthenticationRealm: null },
    cpSubsystem: defaultCpSubsystem(),
    logging: { level: 'INFO', format: 'text' },
    source: 'defaults',
  };
}

/**
 * `--port` and GRID_NETWORK_PORT_PORT name the port members use: the member endpoint's when
 * advanced networking declares one, else the unified port. (Setting only `network > port` would be
 * silently ignored under advanced networking.)
 */
export function setMemberPort(draft: Draft, port: number): void {
  draft.network.port.port = port;
  if (draft.advancedNetwork.memberEndpoint !== null) draft.advancedNetwork.memberEndpoint.port.port = port;
}
