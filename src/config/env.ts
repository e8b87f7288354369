// GRID_* environment variables override the XML file. The name is `GRID_` + the element path in
// upper case, levels joined by `_`, dashes dropped (the reference's HZ_ convention):
// `<network><port auto-increment>` → GRID_NETWORK_PORT_AUTOINCREMENT. Named elements put their name
// in the path: GRID_MAP_ORDERS_BACKUPCOUNT; the field is matched from the end, so names may contain
// `_`. An existing map or queue is matched ignoring case and dashes; otherwise a new one is created
// with the lower-cased name and built-in defaults. WAN publishers have two names in their path,
// GRID_WANREPLICATION_<SCHEME>_BATCHPUBLISHER_<PUBLISHERID>_<FIELD>, each matched (or created) by
// the same rule. Properties use GRID_PROPERTY_ + the property name
// upper-cased with `.` as `_` (GRID_PROPERTY_GRID_PARTITION_COUNT → grid.partition.count).
// Every GRID_ variable must be understood: a typo is an error with a hint, never silently ignored.
import { ConfigError } from './config-error.js';
import { suggest } from './did-you-mean.js';
import {
  defaultMap,
  defaultPublisher,
  defaultQueue,
  defaultWanRef,
  originKey,
  setMemberPort,
  type DeepMutable,
  type Draft,
  type MapDraft,
  type Origins,
  type QueueDraft,
  type WanPublisherDraft,
  type WanSchemeDraft,
} from './draft.js';
import { findPropertySpec, GRID_PROPERTY_SPECS, isGridPropertyName } from './properties.js';
import { parseInterfaceText } from './interface-pattern.js';
import { parseCpMemberCount, parseGroupSize, parseNonNegativeInt, parsePositiveInt } from './schema-cluster.js';
import { parseGroupName } from './schema-network.js';
import { setGridProperty } from './schema.js';
import {
  parseBackupCount,
  parseEvictionPolicy,
  parseEvictionSize,
  parseMaxSizePolicy,
  parseMergeBatchSize,
  parseMergePolicy,
  parseMerkleDepth,
  parseNonNegative,
  parseQueueMergePolicy,
  parseQueueTtl,
} from './schema-structures.js';
import { ENDPOINT_GROUPS, LOG_LEVELS, type CpFencedLockConfig, type CpSemaphoreConfig, type LogFormat, type WanReplicationRefConfig } from './types.js';
import {
  parseWanAcknowledgeType,
  parseWanBatchMaxDelayMs,
  parseWanBatchSize,
  parseWanConsistencyCheckStrategy,
  parseWanPublisherState,
  parseWanQueueCapacity,
  parseWanQueueFullBehavior,
  parseWanResponseTimeoutMs,
  parseWanTargetEndpoints,
} from './wan-values.js';
import {
  expectedGot,
  parseBoolean,
  parseEnum,
  parseHost,
  parseInteger,
  parseMemberAddress,
  parseName,
  parsePort,
  parseStructureName,
  splitList,
  type Parsed,
} from './values.js';

export type Env = Readonly<Record<string, string | undefined>>;

export const ENV_PREFIX = 'GRID_';
/** Read by the loader to find the file, not an override. */
export const ENV_CONFIG = 'GRID_CONFIG';

type Apply<T> = (target: T, raw: string, variable: string) => void;

/** A setter that parses `raw` first and reports a bad value naming the variable. */
function field<T, V>(parse: (raw: string) => Parsed<V>, assign: (target: T, value: V) => void): Apply<T> {
  return (target, raw, variable) => assign(target, mustParse(parse, raw, variable));
}

function mustParse<V>(parse: (raw: string) => Parsed<V>, raw: string, variable: string): V {
  const parsed = parse(raw);
  if (!parsed.ok) throw new ConfigError(`environment variable ${variable}`, expectedGot(parsed.expected, raw));
  return parsed.value;
}

/** Variables with a fixed name, without the GRID_ prefix. */
const FIXED: Readonly<Record<string, Apply<Draft>>> = {
  CLUSTERNAME: field(parseName, (d, v) => (d.clusterName = v)),
  INSTANCENAME: field(parseName, (d, v) => (d.instanceName = v)),
  LITEMEMBER_ENABLED: field(parseBoolean, (d, v) => (d.liteMember = v)),
  LOGGING_LEVEL: field((r) => parseEnum(r, LOG_LEVELS), (d, v) => (d.logging.level = v)),
  LOGGING_FORMAT: field((r) => parseEnum<LogFormat>(r.toLowerCase(), ['text', 'json']), (d, v) => (d.logging.format = v)),
  NETWORK_PUBLICADDRESS: field(parseHost, (d, v) => (d.network.publicAddress = v)),
  // Port 0 (the OS picks a free port) is allowed here and in --port, for tests and tools.
  NETWORK_PORT_PORT: field((r) => parsePort(r, 0), (d, v) => setMemberPort(d, v)),
  NETWORK_PORT_AUTOINCREMENT: field(parseBoolean, (d, v) => (d.network.port.autoIncrement = v)),
  NETWORK_PORT_PORTCOUNT: field((r) => parseInteger(r, 1, 65535), (d, v) => (d.network.port.portCount = v)),
  NETWORK_INTERFACES_ENABLED: field(parseBoolean, (d, v) => (d.network.interfaces.enabled = v)),
  NETWORK_INTERFACES_INTERFACE: (d, raw, variable) => {
    d.network.interfaces.interfaces = splitList(raw).map((item) => mustParse(parseInterfaceText, item, variable));
  },
  NETWORK_RESTAPI_ENABLED: field(parseBoolean, (d, v) => (d.network.restApi.enabled = v)),
  NETWORK_RESTAPI_CONSOLE_ENABLED: field(parseBoolean, (d, v) => (d.network.restApi.console.enabled = v)),
  NETWORK_CLIENTPROTOCOL_ENABLED: field(parseBoolean, (d, v) => (d.network.clientProtocol.enabled = v)),
  NETWORK_JOIN_TCPIP_ENABLED: field(parseBoolean, (d, v) => (d.network.join.tcpIp.enabled = v)),
  NETWORK_JOIN_TCPIP_CONNECTIONTIMEOUTSECONDS: field((r) => parseInteger(r, 1, 3600), (d, v) => (d.network.join.tcpIp.connectionTimeoutSeconds = v)),
  NETWORK_JOIN_TCPIP_MEMBERLIST: (d, raw, variable) => {
    d.network.join.tcpIp.members = splitList(raw).map((item) => mustParse(parseMemberAddress, item, variable));
  },
  PERSISTENCE_ENABLED: field(parseBoolean, (d, v) => (d.persistence.enabled = v)),
  PERSISTENCE_BASEDIR: field(parseName, (d, v) => (d.persistence.baseDir = v)),
  CPSUBSYSTEM_CPMEMBERCOUNT: field(parseCpMemberCount, (d, v) => (d.cpSubsystem.cpMemberCount = v)),
  CPSUBSYSTEM_GROUPSIZE: field(parseGroupSize, (d, v) => (d.cpSubsystem.groupSize = v)),
  CPSUBSYSTEM_SESSIONTIMETOLIVESECONDS: field(parsePositiveInt, (d, v) => (d.cpSubsystem.sessionTimeToLiveSeconds = v)),
  CPSUBSYSTEM_SESSIONHEARTBEATINTERVALSECONDS: field(parsePositiveInt, (d, v) => (d.cpSubsystem.sessionHeartbeatIntervalSeconds = v)),
  CPSUBSYSTEM_MISSINGCPMEMBERAUTOREMOVALSECONDS: field(parsePositiveInt, (d, v) => (d.cpSubsystem.missingCpMemberAutoRemovalSeconds = v)),
  CPSUBSYSTEM_FAILONINDETERMINATEOPERATIONSTATE: field(parseBoolean, (d, v) => (d.cpSubsystem.failOnIndeterminateOperationState = v)),
  CPSUBSYSTEM_PERSISTENCEENABLED: field(parseBoolean, (d, v) => (d.cpSubsystem.persistenceEnabled = v)),
  CPSUBSYSTEM_BASEDIR: field(parseName, (d, v) => (d.cpSubsystem.baseDir = v)),
  CPSUBSYSTEM_DATALOADTIMEOUTSECONDS: field(parsePositiveInt, (d, v) => (d.cpSubsystem.dataLoadTimeoutSeconds = v)),
  CPSUBSYSTEM_RAFTALGORITHM_LEADERELECTIONTIMEOUTINMILLIS: field(parsePositiveInt, (d, v) => (d.cpSubsystem.raftAlgorithm.leaderElectionTimeoutInMillis = v)),
  CPSUBSYSTEM_RAFTALGORITHM_LEADERHEARTBEATPERIODINMILLIS: field(parsePositiveInt, (d, v) => (d.cpSubsystem.raftAlgorithm.leaderHeartbeatPeriodInMillis = v)),
  CPSUBSYSTEM_RAFTALGORITHM_MAXMISSEDLEADERHEARTBEATCOUNT: field(parsePositiveInt, (d, v) => (d.cpSubsystem.raftAlgorithm.maxMissedLeaderHeartbeatCount = v)),
  CPSUBSYSTEM_RAFTALGORITHM_APPENDREQUESTMAXENTRYCOUNT: field(parsePositiveInt, (d, v) => (d.cpSubsystem.raftAlgorithm.appendRequestMaxEntryCount = v)),
  CPSUBSYSTEM_RAFTALGORITHM_COMMITINDEXADVANCECOUNTTOSNAPSHOT: field(parsePositiveInt, (d, v) => (d.cpSubsystem.raftAlgorithm.commitIndexAdvanceCountToSnapshot = v)),
  CPSUBSYSTEM_RAFTALGORITHM_UNCOMMITTEDENTRYCOUNTTOREJECTNEWAPPENDS: field(parsePositiveInt, (d, v) => (d.cpSubsystem.raftAlgorithm.uncommittedEntryCountToRejectNewAppends = v)),
  CPSUBSYSTEM_RAFTALGORITHM_APPENDREQUESTBACKOFFTIMEOUTINMILLIS: field(parsePositiveInt, (d, v) => (d.cpSubsystem.raftAlgorithm.appendRequestBackoffTimeoutInMillis = v)),
};

/** Named CP structures: GRID_CPSUBSYSTEM_SEMAPHORES_SEMAPHORE_<NAME>_<FIELD>, GRID_CPSUBSYSTEM_LOCKS_FENCEDLOCK_<NAME>_<FIELD>. */
const SEMAPHORE_PREFIX = 'CPSUBSYSTEM_SEMAPHORES_SEMAPHORE_';
const LOCK_PREFIX = 'CPSUBSYSTEM_LOCKS_FENCEDLOCK_';
const SEMAPHORE_FIELDS: Readonly<Record<string, Apply<DeepMutable<CpSemaphoreConfig>>>> = {
  JDKCOMPATIBLE: field(parseBoolean, (s, v) => (s.jdkCompatible = v)),
  INITIALPERMITS: field(parseNonNegativeInt, (s, v) => (s.initialPermits = v)),
};
const LOCK_FIELDS: Readonly<Record<string, Apply<DeepMutable<CpFencedLockConfig>>>> = {
  LOCKACQUIRELIMIT: field(parseNonNegativeInt, (l, v) => (l.lockAcquireLimit = v)),
};

function applyCpNamed(draft: Draft, path: string, variable: string, raw: string): boolean {
  if (path.startsWith(SEMAPHORE_PREFIX)) {
    const split = splitNamed(path.slice(SEMAPHORE_PREFIX.length), SEMAPHORE_FIELDS);
    if (split === null) return false;
    const s = findOrCreateBy(draft.cpSubsystem.semaphores, (x) => x.name, split.name, variable, (name) => ({ name, jdkCompatible: false, initialPermits: 0 }), parseName);
    split.apply(s, raw, variable);
    return true;
  }
  if (path.startsWith(LOCK_PREFIX)) {
    const split = splitNamed(path.slice(LOCK_PREFIX.length), LOCK_FIELDS);
    if (split === null) return false;
    const l = findOrCreateBy(draft.cpSubsystem.locks, (x) => x.name, split.name, variable, (name) => ({ name, lockAcquireLimit: 0 }), parseName);
    split.apply(l, raw, variable);
    return true;
  }
  return false;
}

const MAP_FIELDS: Readonly<Record<string, Apply<MapDraft>>> = {
  BACKUPCOUNT: field(parseBackupCount, (m, v) => (m.backupCount = v)),
  ASYNCBACKUPCOUNT: field(parseBackupCount, (m, v) => (m.asyncBackupCount = v)),
  TIMETOLIVESECONDS: field(parseNonNegative, (m, v) => (m.timeToLiveSeconds = v)),
  MAXIDLESECONDS: field(parseNonNegative, (m, v) => (m.maxIdleSeconds = v)),
  EVICTION_SIZE: field(parseEvictionSize, (m, v) => (m.eviction.size = v)),
  EVICTION_EVICTIONPOLICY: field(parseEvictionPolicy, (m, v) => (m.eviction.policy = v)),
  EVICTION_MAXSIZEPOLICY: field(parseMaxSizePolicy, (m, v) => (m.eviction.maxSizePolicy = v)),
  MERKLETREE_ENABLED: field(parseBoolean, (m, v) => (m.merkleTree.enabled = v)),
  MERKLETREE_DEPTH: field(parseMerkleDepth, (m, v) => (m.merkleTree.depth = v)),
  DATAPERSISTENCE_ENABLED: field(parseBoolean, (m, v) => (m.dataPersistence.enabled = v)),
  DATAPERSISTENCE_FSYNC: field(parseBoolean, (m, v) => (m.dataPersistence.fsync = v)),
  MERGEPOLICY: field(parseMergePolicy, (m, v) => (m.mergePolicy.policy = v)),
  MERGEPOLICY_BATCHSIZE: field(parseMergeBatchSize, (m, v) => (m.mergePolicy.batchSize = v)),
  // A ref field on a map without a ref creates one; if no variable names its scheme, validation
  // refuses the nameless ref (variables are applied in name order, so NAME may come after the others).
  WANREPLICATIONREF_NAME: field(parseName, (m, v) => (wanRef(m).name = v)),
  WANREPLICATIONREF_MERGEPOLICYCLASSNAME: field(parseMergePolicy, (m, v) => (wanRef(m).mergePolicy = v)),
  WANREPLICATIONREF_REPUBLISHINGENABLED: field(parseBoolean, (m, v) => (wanRef(m).republishingEnabled = v)),
};

function wanRef(m: MapDraft): DeepMutable<WanReplicationRefConfig> {
  m.wanReplicationRef ??= defaultWanRef('');
  return m.wanReplicationRef;
}

/** Fields of GRID_WANREPLICATION_<SCHEME>_BATCHPUBLISHER_<PUBLISHERID>_<FIELD>. The id is the publisher's address, so it cannot be set. */
const PUBLISHER_FIELDS: Readonly<Record<string, Apply<WanPublisherDraft>>> = {
  CLUSTERNAME: field(parseName, (p, v) => (p.clusterName = v)),
  TARGETENDPOINTS: field(parseWanTargetEndpoints, (p, v) => (p.targetEndpoints = v)),
  BATCHSIZE: field(parseWanBatchSize, (p, v) => (p.batchSize = v)),
  BATCHMAXDELAYMILLIS: field(parseWanBatchMaxDelayMs, (p, v) => (p.batchMaxDelayMs = v)),
  RESPONSETIMEOUTMILLIS: field(parseWanResponseTimeoutMs, (p, v) => (p.responseTimeoutMs = v)),
  QUEUECAPACITY: field(parseWanQueueCapacity, (p, v) => (p.queueCapacity = v)),
  QUEUEFULLBEHAVIOR: field(parseWanQueueFullBehavior, (p, v) => (p.queueFullBehavior = v)),
  ACKNOWLEDGETYPE: field(parseWanAcknowledgeType, (p, v) => (p.acknowledgeType = v)),
  INITIALPUBLISHERSTATE: field(parseWanPublisherState, (p, v) => (p.initialPublisherState = v)),
  SYNC_CONSISTENCYCHECKSTRATEGY: field(parseWanConsistencyCheckStrategy, (p, v) => (p.consistencyCheckStrategy = v)),
};

const WAN_PREFIX = 'WANREPLICATION_';
const PUBLISHER_INFIX = '_BATCHPUBLISHER_';

const QUEUE_FIELDS: Readonly<Record<string, Apply<QueueDraft>>> = {
  MAXSIZE: field(parseNonNegative, (q, v) => (q.maxSize = v)),
  BACKUPCOUNT: field(parseBackupCount, (q, v) => (q.backupCount = v)),
  ASYNCBACKUPCOUNT: field(parseBackupCount, (q, v) => (q.asyncBackupCount = v)),
  EMPTYQUEUETTL: field(parseQueueTtl, (q, v) => (q.emptyQueueTtlSeconds = v)),
  DATAPERSISTENCE_ENABLED: field(parseBoolean, (q, v) => (q.dataPersistence.enabled = v)),
  DATAPERSISTENCE_FSYNC: field(parseBoolean, (q, v) => (q.dataPersistence.fsync = v)),
  MERGEPOLICY: field(parseQueueMergePolicy, (q, v) => (q.mergePolicy.policy = v)),
  MERGEPOLICY_BATCHSIZE: field(parseMergeBatchSize, (q, v) => (q.mergePolicy.batchSize = v)),
};

const GROUPS_PREFIX = 'NETWORK_RESTAPI_ENDPOINTGROUPS_';
const GROUPS_SUFFIX = '_ENABLED';

/** Applies every GRID_* variable (sorted by name, so the outcome never depends on order); returns their names. */
export function applyEnv(draft: Draft, env: Env, origins: Origins): string[] {
  const names = Object.keys(env)
    .filter((k) => k.startsWith(ENV_PREFIX) && k !== ENV_CONFIG && env[k] !== undefined)
    .sort();
  for (const variable of names) applyOne(draft, variable, env[variable] ?? '', origins);
  return names;
}

function applyOne(draft: Draft, variable: string, raw: string, origins: Origins): void {
  const path = variable.slice(ENV_PREFIX.length);
  const fixed = Object.hasOwn(FIXED, path) ? FIXED[path] : undefined;
  if (fixed !== undefined) {
    if (path === 'PERSISTENCE_ENABLED') origins.set(originKey.persistence, `environment variable ${variable}`);
    if (path === 'CPSUBSYSTEM_CPMEMBERCOUNT') origins.set(originKey.cp, `environment variable ${variable}`);
    if (path.startsWith('NETWORK_INTERFACES_')) origins.set(originKey.interfaces, `environment variable ${variable}`);
    return fixed(draft, raw, variable);
  }
  if (path.startsWith(GROUPS_PREFIX) && path.endsWith(GROUPS_SUFFIX)) {
    const group = path.slice(GROUPS_PREFIX.length, -GROUPS_SUFFIX.length);
    const name = mustGroup(group, variable);
    draft.network.restApi.groups[name] = mustParse(parseBoolean, raw, variable);
    return;
  }
  if (path.startsWith('MAP_')) {
    const split = splitNamed(path.slice(4), MAP_FIELDS);
    if (split !== null) {
      if (misspeltField(draft.maps, (m) => m.name, split.name, MAP_FIELDS)) throw unknownVariable(variable, path, draft);
      const map = findOrCreate(draft.maps, split.name, variable, defaultMap, originKey.map, origins);
      const hadRef = map.wanReplicationRef !== null;
      split.apply(map, raw, variable);
      if (split.key.includes('BACKUPCOUNT')) origins.set(originKey.map(map.name), `environment variable ${variable}`);
      // The ref's origin moves to a variable only when the variable decides which scheme it names.
      if (split.key === 'WANREPLICATIONREF_NAME' || !hadRef) {
        if (map.wanReplicationRef !== null) origins.set(originKey.wanRef(map.name), `environment variable ${variable}`);
      }
      return;
    }
  }
  if (path.startsWith('QUEUE_')) {
    const split = splitNamed(path.slice(6), QUEUE_FIELDS);
    if (split !== null) {
      if (misspeltField(draft.queues, (q) => q.name, split.name, QUEUE_FIELDS)) throw unknownVariable(variable, path, draft);
      const queue = findOrCreate(draft.queues, split.name, variable, defaultQueue, originKey.queue, origins);
      split.apply(queue, raw, variable);
      if (split.key.includes('BACKUPCOUNT')) origins.set(originKey.queue(queue.name), `environment variable ${variable}`);
      return;
    }
  }
  if (applyCpNamed(draft, path, variable, raw)) return;
  if (path.startsWith(WAN_PREFIX) && applyWan(draft, path.slice(WAN_PREFIX.length), variable, raw, origins)) return;
  if (path.startsWith('PROPERTY_') && path.length > 9) {
    const name = path.slice(9).toLowerCase().replace(/_/g, '.');
    if (isGridPropertyName(name) && findPropertySpec(name) === undefined) throw unknownVariable(variable, path, draft);
    if (isGridPropertyName(name)) setGridProperty(draft, name, raw, `environment variable ${variable}`, origins);
    else draft.rawProperties[name] = raw.trim();
    return;
  }
  throw unknownVariable(variable, path, draft);
}

/**
 * `<SCHEME>_BATCHPUBLISHER_<PUBLISHERID>_<FIELD>`: the field is matched from the end, the scheme
 * ends at the first `_BATCHPUBLISHER_` (so a publisher id may contain that word, a scheme name may
 * not). Returns false when the rest has no such shape (the caller reports an unknown variable).
 */
function applyWan(draft: Draft, rest: string, variable: string, raw: string, origins: Origins): boolean {
  const split = splitNamed(rest, PUBLISHER_FIELDS);
  if (split === null) return false;
  const at = split.name.indexOf(PUBLISHER_INFIX);
  if (at <= 0 || at + PUBLISHER_INFIX.length >= split.name.length) return false;
  const schemeSegment = split.name.slice(0, at);
  const idSegment = split.name.slice(at + PUBLISHER_INFIX.length);
  const from = `environment variable ${variable}`;
  const known = draft.wanReplications.find((w) => envSegment(w.name) === envSegment(schemeSegment));
  if (misspeltField(known?.publishers ?? [], (p) => p.publisherId, idSegment, PUBLISHER_FIELDS)) return false;
  const scheme = findOrCreate(draft.wanReplications, schemeSegment, variable, (name): WanSchemeDraft => ({ name, publishers: [] }), originKey.wan, origins, parseName);
  const publisher = findOrCreateBy(scheme.publishers, (p) => p.publisherId, idSegment, variable, (id) => {
    // A publisher that only the environment declares: the reference's defaults, as an XML
    // <batch-publisher> holding only <publisher-id> would be. Validation requires its endpoints.
    const p = defaultPublisher();
    p.publisherId = id;
    origins.set(originKey.wanPublisher(scheme.name, id), from);
    return p;
  });
  split.apply(publisher, raw, variable);
  if (split.key === 'TARGETENDPOINTS') origins.set(originKey.wanPublisher(scheme.name, publisher.publisherId), from);
  return true;
}

function mustGroup(group: string, variable: string): (typeof ENDPOINT_GROUPS)[number] {
  // Group names already contain `_`; the dash-dropping rule also allows them written without it.
  const joined = ENDPOINT_GROUPS.find((g) => g.replace(/_/g, '') === group);
  if (joined !== undefined) return joined;
  if (group === 'HOTRESTART') return 'PERSISTENCE';
  const parsed = parseGroupName(group);
  if (!parsed.ok) throw new ConfigError(`environment variable ${variable}`, `unknown endpoint group ${group}: ${parsed.expected}`);
  return parsed.value;
}

/** `ORDERS_EVICTION_SIZE` → name ORDERS, field EVICTION_SIZE (the longest field that fits). */
function splitNamed<T>(rest: string, fields: Readonly<Record<string, Apply<T>>>): { name: string; key: string; apply: Apply<T> } | null {
  let best: { name: string; key: string; apply: Apply<T> } | null = null;
  let bestLength = -1;
  for (const [key, apply] of Object.entries(fields)) {
    if (rest.length > key.length + 1 && rest.endsWith(`_${key}`) && key.length > bestLength) {
      best = { name: rest.slice(0, rest.length - key.length - 1), key, apply };
      bestLength = key.length;
    }
  }
  return best;
}

/** Matches a configured name ignoring case and dashes; creates a lower-cased one when none matches. */
function findOrCreate<T extends { name: string }>(
  list: T[],
  segment: string,
  variable: string,
  create: (name: string) => T,
  key: (name: string) => string,
  origins: Origins,
  parse: (raw: string) => Parsed<string> = parseStructureName,
): T {
  return findOrCreateBy(list, (c) => c.name, segment, variable, (name) => {
    const created = create(name);
    origins.set(key(name), `environment variable ${variable}`);
    return created;
  }, parse);
}

/**
 * A name the list lacks whose last `_` part starts a field of several parts (ORDERS_EVICTION in
 * GRID_MAP_ORDERS_EVICTION_BACKUPCOUNT, ORDERS_WANREPLICATIONREF in a misspelt
 * GRID_MAP_ORDERS_WANREPLICATIONREF_MERGEPOLICY) is taken for a misspelt field, not a new name:
 * the variable is refused as unknown instead of creating a stray map, queue or publisher.
 */
function misspeltField<T>(list: readonly T[], nameOf: (item: T) => string, segment: string, fields: Readonly<Record<string, unknown>>): boolean {
  return endsWithFieldGroup(segment, fields) && !list.some((item) => envSegment(nameOf(item)) === envSegment(segment));
}

function endsWithFieldGroup(segment: string, fields: Readonly<Record<string, unknown>>): boolean {
  const cut = segment.lastIndexOf('_');
  if (cut < 0) return false;
  const last = segment.slice(cut + 1);
  return Object.keys(fields).some((k) => k.startsWith(`${last}_`));
}

/** The name as a path segment: upper case, dashes dropped (config.md "Environment variables"). */
export const envSegment = (name: string): string => name.toUpperCase().replace(/-/g, '');

function findOrCreateBy<T>(
  list: T[],
  nameOf: (item: T) => string,
  segment: string,
  variable: string,
  create: (name: string) => T,
  parse: (raw: string) => Parsed<string> = parseName,
): T {
  const matches = list.filter((c) => envSegment(nameOf(c)) === envSegment(segment));
  const [first, second] = matches;
  if (second !== undefined && first !== undefined) {
    throw new ConfigError(`environment variable ${variable}`, `${segment} matches both ${nameOf(first)} and ${nameOf(second)}; rename one of them`);
  }
  if (first !== undefined) return first;
  const created = create(mustParse(parse, segment.toLowerCase(), variable));
  list.push(created);
  return created;
}

function unknownVariable(variable: string, path: string, draft: Draft): ConfigError {
  // The variable itself can be among the candidates (a well-formed name whose shape is wrong elsewhere).
  const candidates = envCandidates(path, draft).filter((c) => c !== variable);
  // A typo seldom changes the kind (MAP_ into QUEUE_): candidates of the variable's own kind go first.
  const kind = `${ENV_PREFIX}${path.split('_')[0] ?? ''}_`;
  const hint = suggest(variable, candidates.filter((c) => c.startsWith(kind))) ?? suggest(variable, candidates);
  return new ConfigError(`environment variable ${variable} is unknown${hint === null ? '' : ` (did you mean ${hint}?)`}`);
}

/**
 * Names a typo is compared with: fixed ones, groups, properties, map/queue fields under each
 * possible name split, and the fields of every configured WAN publisher and of the publisher the
 * variable seems to address.
 */
function envCandidates(path: string, draft: Draft): string[] {
  const out = [ENV_CONFIG, ...Object.keys(FIXED).map((k) => ENV_PREFIX + k)];
  for (const g of ENDPOINT_GROUPS) out.push(`${ENV_PREFIX}${GROUPS_PREFIX}${g}${GROUPS_SUFFIX}`);
  for (const p of GRID_PROPERTY_SPECS) out.push(`${ENV_PREFIX}PROPERTY_${p.name.toUpperCase().replace(/\./g, '_')}`);
  const segments = path.split('_');
  for (let k = 2; k < segments.length && k < 8; k++) {
    const name = segments.slice(1, k).join('_');
    // Names that would be refused as misspelt fields are no suggestion.
    if (!endsWithFieldGroup(name, MAP_FIELDS)) for (const f of Object.keys(MAP_FIELDS)) out.push(`${ENV_PREFIX}MAP_${name}_${f}`);
    if (!endsWithFieldGroup(name, QUEUE_FIELDS)) for (const f of Object.keys(QUEUE_FIELDS)) out.push(`${ENV_PREFIX}QUEUE_${name}_${f}`);
  }
  const publishers = draft.wanReplications.flatMap((w) => w.publishers.map((p) => `${envSegment(w.name)}${PUBLISHER_INFIX}${envSegment(p.publisherId)}`));
  for (let k = 2; k < segments.length && k < 12; k++) {
    const prefix = segments.slice(1, k).join('_');
    if (prefix.includes(PUBLISHER_INFIX)) publishers.push(prefix);
  }
  for (const p of publishers) for (const f of Object.keys(PUBLISHER_FIELDS)) out.push(`${ENV_PREFIX}${WAN_PREFIX}${p}_${f}`);
  return out;
}
