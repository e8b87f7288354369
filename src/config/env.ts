// GRID_* environment variables override the XML file. The name is `GRID_` + the element path in
// upper case, levels joined by `_`, dashes dropped (the reference's HZ_ convention):
// `<network><port auto-increment>` → GRID_NETWORK_PORT_AUTOINCREMENT. Named elements put their name
// in the path: GRID_MAP_ORDERS_BACKUPCOUNT; the field is matched from the end, so names may contain
// `_`. An existing map or queue is matched ignoring case and dashes; otherwise a new one is created
// with the lower-cased name and built-in defaults. Properties use GRID_PROPERTY_ + the property name
// upper-cased with `.` as `_` (GRID_PROPERTY_GRID_PARTITION_COUNT → grid.partition.count).
// Every GRID_ variable must be understood: a typo is an error with a hint, never silently ignored.
import { ConfigError } from './config-error.js';
import { suggest } from './did-you-mean.js';
import { defaultMap, defaultQueue, originKey, setMemberPort, type Draft, type MapDraft, type Origins, type QueueDraft } from './draft.js';
import { findPropertySpec, GRID_PROPERTY_SPECS, isGridPropertyName } from './properties.js';
import { parseInterfaceText } from './interface-pattern.js';
import { parseCpMemberCount, parseGroupSize } from './schema-cluster.js';
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
import { ENDPOINT_GROUPS, LOG_LEVELS, type LogFormat } from './types.js';
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
  NETWORK_JOIN_TCPIP_ENABLED: field(parseBoolean, (d, v) => (d.network.join.tcpIp.enabled = v)),
  NETWORK_JOIN_TCPIP_CONNECTIONTIMEOUTSECONDS: field((r) => parseInteger(r, 1, 3600), (d, v) => (d.network.join.tcpIp.connectionTimeoutSeconds = v)),
  NETWORK_JOIN_TCPIP_MEMBERLIST: (d, raw, variable) => {
    d.network.join.tcpIp.members = splitList(raw).map((item) => mustParse(parseMemberAddress, item, variable));
  },
  PERSISTENCE_ENABLED: field(parseBoolean, (d, v) => (d.persistence.enabled = v)),
  PERSISTENCE_BASEDIR: field(parseName, (d, v) => (d.persistence.baseDir = v)),
  CPSUBSYSTEM_CPMEMBERCOUNT: field(parseCpMemberCount, (d, v) => (d.cpSubsystem.cpMemberCount = v)),
  CPSUBSYSTEM_GROUPSIZE: field(parseGroupSize, (d, v) => (d.cpSubsystem.groupSize = v)),
};

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
};

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
      const map = findOrCreate(draft.maps, split.name, variable, defaultMap, originKey.map, origins);
      split.apply(map, raw, variable);
      if (split.key.includes('BACKUPCOUNT')) origins.set(originKey.map(map.name), `environment variable ${variable}`);
      return;
    }
  }
  if (path.startsWith('QUEUE_')) {
    const split = splitNamed(path.slice(6), QUEUE_FIELDS);
    if (split !== null) {
      const queue = findOrCreate(draft.queues, split.name, variable, defaultQueue, originKey.queue, origins);
      split.apply(queue, raw, variable);
      if (split.key.includes('BACKUPCOUNT')) origins.set(originKey.queue(queue.name), `environment variable ${variable}`);
      return;
    }
  }
  if (path.startsWith('PROPERTY_') && path.length > 9) {
    const name = path.slice(9).toLowerCase().replace(/_/g, '.');
    if (isGridPropertyName(name) && findPropertySpec(name) === undefined) throw unknownVariable(variable, path);
    if (isGridPropertyName(name)) setGridProperty(draft, name, raw, `environment variable ${variable}`, origins);
    else draft.rawProperties[name] = raw.trim();
    return;
  }
  throw unknownVariable(variable, path);
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
): T {
  const norm = (s: string): string => s.toUpperCase().replace(/-/g, '');
  const matches = list.filter((c) => norm(c.name) === norm(segment));
  const [first, second] = matches;
  if (second !== undefined && first !== undefined) {
    throw new ConfigError(`environment variable ${variable}`, `${segment} matches both ${first.name} and ${second.name}; rename one of them`);
  }
  if (first !== undefined) return first;
  const created = create(mustParse(parseStructureName, segment.toLowerCase(), variable));
  list.push(created);
  origins.set(key(created.name), `environment variable ${variable}`);
  return created;
}

function unknownVariable(variable: string, path: string): ConfigError {
  const hint = suggest(variable, envCandidates(path));
  return new ConfigError(`environment variable ${variable} is unknown${hint === null ? '' : ` (did you mean ${hint}?)`}`);
}

/** Names a typo is compared with: fixed ones, groups, properties and map/queue fields under each possible name split. */
function envCandidates(path: string): string[] {
  const out = [ENV_CONFIG, ...Object.keys(FIXED).map((k) => ENV_PREFIX + k)];
  for (const g of ENDPOINT_GROUPS) out.push(`${ENV_PREFIX}${GROUPS_PREFIX}${g}${GROUPS_SUFFIX}`);
  for (const p of GRID_PROPERTY_SPECS) out.push(`${ENV_PREFIX}PROPERTY_${p.name.toUpperCase().replace(/\./g, '_')}`);
  const segments = path.split('_');
  for (let k = 2; k < segments.length && k < 8; k++) {
    const name = segments.slice(1, k).join('_');
    for (const f of Object.keys(MAP_FIELDS)) out.push(`${ENV_PREFIX}MAP_${name}_${f}`);
    for (const f of Object.keys(QUEUE_FIELDS)) out.push(`${ENV_PREFIX}QUEUE_${name}_${f}`);
  }
  return out;
}
