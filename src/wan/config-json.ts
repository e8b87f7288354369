// The JSON form of a WAN scheme, as `POST /grid/rest/wan/addWanConfig` receives it (rest.md §8) and
// as a scheme is shipped to other members: the reference's field names (`name`, `batchPublishers[]`
// with `clusterName`, `publisherId`, `targetEndpoints`, ..., `sync.consistencyCheckStrategy`), enum
// values as names (any letter case, as in the XML) or as the reference's integer codes. Values go
// through the same parsers and limits as the XML file (src/config/wan-values.ts), so a scheme added
// at run time can never hold what the file would refuse.
//
// Invariants:
// - Reading is bounded before JSON.parse runs: at most WAN_CONFIG_JSON_BYTES_MAX bytes (UTF-8) and
//   WAN_CONFIG_JSON_DEPTH_MAX levels of nesting; after it, only known paths are walked.
// - Every refusal is a GridError ERR_WAN_CONFIG_INVALID (400) whose message starts with the field's
//   path (`batchPublishers[1].queueCapacity: ...`); nothing else is thrown for any input text.
// - `null` counts as absent, as in the reference's reader.
// - mergeWanConfig never changes a publisher that exists: it only appends new ids (idempotent).
//
// Pure: no I/O, no clock. Imports config/ and util/ only; nothing in config/ imports this file.
import { suggest } from '../config/did-you-mean.js';
import { defaultPublisher, type WanPublisherDraft } from '../config/draft.js';
import type { WanBatchPublisherConfig, WanReplicationConfig } from '../config/types.js';
import { parseName, type Parsed } from '../config/values.js';
import {
  parseWanAcknowledgeType,
  parseWanBatchMaxDelayMs,
  parseWanBatchSize,
  parseWanConsistencyCheckStrategy,
  parseWanPublisherState,
  parseWanQueueCapacity,
  parseWanQueueFullBehavior,
  parseWanResponseTimeoutMs,
  parseWanTargetEndpoint,
  parseWanTargetEndpoints,
  WAN_PUBLISHERS_PER_SCHEME_MAX,
  WAN_SCHEMES_MAX,
  WAN_TARGET_ENDPOINTS_MAX,
} from '../config/wan-values.js';
import { GridError } from '../util/errors.js';

/** The largest addWanConfig JSON accepted, in UTF-8 bytes (checked before parsing). */
export const WAN_CONFIG_JSON_BYTES_MAX = 64 * 1024;
/** Objects and arrays nested deeper than this are refused before parsing; the reference's deepest (discovery properties) is 7. */
export const WAN_CONFIG_JSON_DEPTH_MAX = 16;

type Publisher = WanBatchPublisherConfig;

/** The reference's integer codes (its enums' ids): the code is the position in the list. */
export const WAN_JSON_ENUM_CODES = {
  initialPublisherState: ['REPLICATING', 'PAUSED', 'STOPPED'],
  queueFullBehavior: ['DISCARD_AFTER_MUTATION', 'THROW_EXCEPTION', 'THROW_EXCEPTION_ONLY_IF_REPLICATION_ACTIVE'],
  consistencyCheckStrategy: ['NONE', 'MERKLE_TREES'],
  acknowledgeType: ['ACK_ON_RECEIPT', 'ACK_ON_OPERATION_COMPLETE'],
} as const satisfies {
  readonly initialPublisherState: readonly Publisher['initialPublisherState'][];
  readonly queueFullBehavior: readonly Publisher['queueFullBehavior'][];
  readonly consistencyCheckStrategy: readonly Publisher['consistencyCheckStrategy'][];
  readonly acknowledgeType: readonly Publisher['acknowledgeType'][];
};

/** Top-level fields. `customPublishers` is accepted only empty; `consumer` (target-side settings) is ignored. */
const SCHEME_FIELDS = ['name', 'batchPublishers', 'customPublishers', 'consumer'] as const;

const PUBLISHER_FIELDS = [
  'clusterName',
  'publisherId',
  'targetEndpoints',
  'batchSize',
  'batchMaxDelayMillis',
  'responseTimeoutMillis',
  'queueCapacity',
  'queueFullBehavior',
  'acknowledgeType',
  'initialPublisherState',
  'sync',
] as const;

/**
 * Fields the reference's JSON carries for a batch publisher that Grid accepts and ignores, whatever
 * their value: key coalescing (`snapshotEnabled`), thread parking, parallel batches (Grid keeps one
 * batch in flight per partition and endpoint, so order holds), endpoint discovery (Grid uses the
 * static `targetEndpoints`, which stay required), the advanced-network `endpoint`, and custom
 * `properties`.
 */
export const WAN_JSON_IGNORED_PUBLISHER_FIELDS = [
  'snapshotEnabled',
  'idleMinParkNs',
  'idleMaxParkNs',
  'maxConcurrentInvocations',
  'discoveryPeriodSeconds',
  'maxTargetEndpoints',
  'useEndpointPrivateAddress',
  'aws',
  'gcp',
  'azure',
  'kubernetes',
  'eureka',
  'discovery',
  'endpoint',
  'properties',
] as const;

const SYNC_FIELDS = ['consistencyCheckStrategy'] as const;

type JsonObject = { readonly [key: string]: unknown };

function invalid(path: string, what: string): GridError {
  return new GridError('ERR_WAN_CONFIG_INVALID', (path === '' ? what : `${path}: ${what}`).replace(/[\r\n]+/g, ' '));
}

/** A JSON value as quoted in a message: one line, shortened. */
function shown(value: unknown): string {
  // 1e400 parses to Infinity, which JSON.stringify would print as null.
  const s = typeof value === 'number' && !Number.isFinite(value) ? String(value) : (JSON.stringify(value) ?? String(value));
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The field's value, or undefined when it is absent or null (the reference skips nulls). */
function field(o: JsonObject, key: string): unknown {
  return Object.hasOwn(o, key) && o[key] !== null ? o[key] : undefined;
}

function checkFields(o: JsonObject, path: string, known: readonly string[], ignored: readonly string[] = []): void {
  for (const key of Object.keys(o)) {
    if (known.includes(key) || ignored.includes(key)) continue;
    const hint = suggest(key, [...known, ...ignored]);
    throw invalid(join(path, key), `unknown field${hint === null ? '' : ` (did you mean ${hint}?)`}`);
  }
}

const join = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`);

// ---------------------------------------------------------------- parsing

export interface WanConfigJsonOptions {
  /** Overrides WAN_CONFIG_JSON_BYTES_MAX, for a scheme shipped between members (already checked once). */
  readonly bytesMax?: number;
}

/** Reads the JSON of addWanConfig into a scheme; throws GridError ERR_WAN_CONFIG_INVALID naming the field. */
export function parseWanConfigJson(text: string, options: WanConfigJsonOptions = {}): WanReplicationConfig {
  const bytesMax = options.bytesMax ?? WAN_CONFIG_JSON_BYTES_MAX;
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > bytesMax) throw invalid('', `the WAN configuration JSON is ${bytes} bytes; at most ${bytesMax} bytes (${describeBytes(bytesMax)}) are accepted`);
  checkDepth(text);
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch (e) {
    throw invalid('', `the WAN configuration is not valid JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  return readScheme(root);
}

function describeBytes(n: number): string {
  return n % 1024 === 0 ? `${n / 1024} KiB` : `${n} bytes`;
}

/** Counts `{`/`[` nesting outside strings; stops at the first level past the limit. Malformed text is left to JSON.parse. */
function checkDepth(text: string): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: the next code unit is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > WAN_CONFIG_JSON_DEPTH_MAX) throw invalid('', `the WAN configuration JSON nests deeper than ${WAN_CONFIG_JSON_DEPTH_MAX} levels`);
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
}

function readScheme(root: unknown): WanReplicationConfig {
  if (!isObject(root)) throw invalid('', `the WAN configuration must be a JSON object, got ${shown(root)}`);
  checkFields(root, '', SCHEME_FIELDS);
  const rawName = field(root, 'name');
  if (rawName === undefined) throw invalid('name', 'required: the name of the WAN replication scheme');
  const name = readString(rawName, 'name', parseName);
  const custom = field(root, 'customPublishers');
  if (custom !== undefined && !(Array.isArray(custom) && custom.length === 0)) {
    const what = Array.isArray(custom) ? 'custom publishers are not supported, only batchPublishers' : `expected an empty array, got ${shown(custom)}`;
    throw invalid('customPublishers', what);
  }
  const list = field(root, 'batchPublishers') ?? [];
  if (!Array.isArray(list)) throw invalid('batchPublishers', `expected an array, got ${shown(list)}`);
  if (list.length > WAN_PUBLISHERS_PER_SCHEME_MAX) {
    throw invalid('batchPublishers', `at most ${WAN_PUBLISHERS_PER_SCHEME_MAX} publishers are allowed in one scheme, got ${list.length}`);
  }
  const publishers: Publisher[] = [];
  const firstAt = new Map<string, number>();
  list.forEach((item: unknown, i) => {
    const path = `batchPublishers[${i}]`;
    const p = readPublisher(item, path);
    const first = firstAt.get(p.publisherId);
    if (first !== undefined) {
      const given = isObject(item) && field(item, 'publisherId') !== undefined;
      const at = given ? `${path}.publisherId` : path;
      const whose = given ? '' : ' (its clusterName, as no publisherId is given)';
      throw invalid(at, `publisher id ${JSON.stringify(p.publisherId)}${whose} is used twice (first by batchPublishers[${first}])`);
    }
    firstAt.set(p.publisherId, i);
    publishers.push(p);
  });
  return { name, publishers };
}

function readPublisher(item: unknown, path: string): Publisher {
  if (!isObject(item)) throw invalid(path, `expected an object, got ${shown(item)}`);
  checkFields(item, path, PUBLISHER_FIELDS, WAN_JSON_IGNORED_PUBLISHER_FIELDS);
  const p: WanPublisherDraft = defaultPublisher();
  const at = (key: string): string => join(path, key);
  // Required here although the XML defaults it to `dev`: a publisher added at run time names its
  // target explicitly, and its id (which defaults to the cluster name) must not silently become `dev`.
  const clusterName = field(item, 'clusterName');
  if (clusterName === undefined) throw invalid(at('clusterName'), 'required: the target cluster name');
  p.clusterName = readString(clusterName, at('clusterName'), parseName);
  const id = field(item, 'publisherId');
  p.publisherId = id === undefined ? p.clusterName : readString(id, at('publisherId'), parseName);
  p.targetEndpoints = readEndpoints(field(item, 'targetEndpoints'), at('targetEndpoints'));
  const int = (key: string, parse: (raw: string) => Parsed<number>, fallback: number): number => {
    const v = field(item, key);
    return v === undefined ? fallback : readInteger(v, at(key), parse);
  };
  p.batchSize = int('batchSize', parseWanBatchSize, p.batchSize);
  p.batchMaxDelayMs = int('batchMaxDelayMillis', parseWanBatchMaxDelayMs, p.batchMaxDelayMs);
  p.responseTimeoutMs = int('responseTimeoutMillis', parseWanResponseTimeoutMs, p.responseTimeoutMs);
  p.queueCapacity = int('queueCapacity', parseWanQueueCapacity, p.queueCapacity);
  p.queueFullBehavior = readEnumField(item, path, 'queueFullBehavior', parseWanQueueFullBehavior, WAN_JSON_ENUM_CODES.queueFullBehavior, p.queueFullBehavior);
  p.acknowledgeType = readEnumField(item, path, 'acknowledgeType', parseWanAcknowledgeType, WAN_JSON_ENUM_CODES.acknowledgeType, p.acknowledgeType);
  p.initialPublisherState = readEnumField(item, path, 'initialPublisherState', parseWanPublisherState, WAN_JSON_ENUM_CODES.initialPublisherState, p.initialPublisherState);
  const sync = field(item, 'sync');
  if (sync !== undefined) {
    if (!isObject(sync)) throw invalid(at('sync'), `expected an object, got ${shown(sync)}`);
    checkFields(sync, at('sync'), SYNC_FIELDS);
    p.consistencyCheckStrategy = readEnumField(
      sync,
      at('sync'),
      'consistencyCheckStrategy',
      parseWanConsistencyCheckStrategy,
      WAN_JSON_ENUM_CODES.consistencyCheckStrategy,
      p.consistencyCheckStrategy,
    );
  }
  return p;
}

/** What a parser expects, in its own words (every parser refuses the empty string). */
function expectedOf<T>(parse: (raw: string) => Parsed<T>): string {
  const r = parse('');
  return r.ok ? 'a value' : r.expected;
}

function readString<T>(value: unknown, path: string, parse: (raw: string) => Parsed<T>): T {
  if (typeof value !== 'string') throw invalid(path, `expected a string: ${expectedOf(parse)}, got ${shown(value)}`);
  const r = parse(value);
  if (!r.ok) throw invalid(path, `expected ${r.expected}, got ${shown(value)}`);
  return r.value;
}

/** A JSON number that is an integer in the parser's range; a string of digits is a wrong type, as in the reference. */
function readInteger(value: unknown, path: string, parse: (raw: string) => Parsed<number>): number {
  // String(1e21) is "1e+21" and String(1.5) is "1.5": the parser refuses both, with the range in its words.
  const r = typeof value === 'number' ? parse(String(value)) : null;
  if (r === null || !r.ok) throw invalid(path, `expected ${expectedOf(parse)}, got ${shown(value)}`);
  return r.value;
}

function readEnumField<T extends string>(
  o: JsonObject,
  path: string,
  key: string,
  parse: (raw: string) => Parsed<T>,
  codes: readonly T[],
  fallback: T,
): T {
  const value = field(o, key);
  if (value === undefined) return fallback;
  const codeList = codes.map((name, code) => `${code} ${name}`).join(', ');
  if (typeof value === 'number') {
    const named = Number.isInteger(value) ? codes[value] : undefined;
    if (named === undefined) throw invalid(join(path, key), `expected an integer code 0..${codes.length - 1} (${codeList}) or a name, got ${shown(value)}`);
    return named;
  }
  if (typeof value === 'string') {
    const r = parse(value);
    if (!r.ok) throw invalid(join(path, key), `expected ${r.expected}, or an integer code (${codeList}), got ${shown(value)}`);
    return r.value;
  }
  throw invalid(join(path, key), `expected a name or an integer code (${codeList}), got ${shown(value)}`);
}

/** The reference's comma-separated string, or an array of `host:port` strings. Required, at least one. */
function readEndpoints(value: unknown, path: string): string[] {
  if (value === undefined) throw invalid(path, 'required: at least one host:port');
  if (typeof value === 'string') {
    const r = parseWanTargetEndpoints(value);
    if (!r.ok) throw invalid(path, `expected ${r.expected}, got ${shown(value)}`);
    return r.value;
  }
  if (!Array.isArray(value)) throw invalid(path, `expected a comma-separated string or an array of host:port strings, got ${shown(value)}`);
  if (value.length > WAN_TARGET_ENDPOINTS_MAX) throw invalid(path, `expected at most ${WAN_TARGET_ENDPOINTS_MAX} endpoints, got ${value.length}`);
  // Each item must be one endpoint: ["a:1,b:2"] is refused rather than read as two.
  value.forEach((item: unknown, i) => readString(item, `${path}[${i}]`, parseWanTargetEndpoint));
  const r = parseWanTargetEndpoints((value as string[]).join(','));
  if (!r.ok) throw invalid(path, `expected ${r.expected}, got ${shown(value)}`);
  return r.value;
}

// ---------------------------------------------------------------- writing

export interface WanPublisherJson {
  readonly clusterName: string;
  readonly publisherId: string;
  /** Comma-separated, as the reference writes it. */
  readonly targetEndpoints: string;
  readonly batchSize: number;
  readonly batchMaxDelayMillis: number;
  readonly responseTimeoutMillis: number;
  readonly queueCapacity: number;
  readonly queueFullBehavior: Publisher['queueFullBehavior'];
  readonly acknowledgeType: Publisher['acknowledgeType'];
  readonly initialPublisherState: Publisher['initialPublisherState'];
  readonly sync: { readonly consistencyCheckStrategy: Publisher['consistencyCheckStrategy'] };
}

export interface WanSchemeJson {
  readonly name: string;
  readonly batchPublishers: readonly WanPublisherJson[];
}

/** The scheme as a JSON value: the reference's field names, every value written, enums by name. */
export function wanConfigToJsonValue(scheme: WanReplicationConfig): WanSchemeJson {
  return {
    name: scheme.name,
    batchPublishers: scheme.publishers.map((p) => ({
      clusterName: p.clusterName,
      publisherId: p.publisherId,
      targetEndpoints: p.targetEndpoints.join(','),
      batchSize: p.batchSize,
      batchMaxDelayMillis: p.batchMaxDelayMs,
      responseTimeoutMillis: p.responseTimeoutMs,
      queueCapacity: p.queueCapacity,
      queueFullBehavior: p.queueFullBehavior,
      acknowledgeType: p.acknowledgeType,
      initialPublisherState: p.initialPublisherState,
      sync: { consistencyCheckStrategy: p.consistencyCheckStrategy },
    })),
  };
}

/** The scheme as JSON text that parseWanConfigJson reads back into an equal scheme. */
export function wanConfigToJson(scheme: WanReplicationConfig): string {
  return JSON.stringify(wanConfigToJsonValue(scheme));
}

// ---------------------------------------------------------------- merging

export interface WanConfigMerge {
  /** Every scheme after the merge; schemes that did not change are the same objects as before. */
  readonly schemes: WanReplicationConfig[];
  /** Ids of `added`'s publishers that were appended, in order. */
  readonly addedPublisherIds: string[];
  /** Ids of `added`'s publishers that already existed (left exactly as they were). */
  readonly ignoredPublisherIds: string[];
}

/**
 * The reference's addWanConfig rule (§7.7): a scheme with a new name is added whole; for an
 * existing name (compared exactly), publishers whose id is new are appended and publishers whose
 * id exists are ignored, never modified. Merging the same scheme again changes nothing. Inputs are
 * not modified. Refused (GridError, nothing merged) when the result would pass the limits of the
 * file: WAN_SCHEMES_MAX schemes, WAN_PUBLISHERS_PER_SCHEME_MAX publishers in a scheme.
 */
export function mergeWanConfig(existing: readonly WanReplicationConfig[], added: WanReplicationConfig): WanConfigMerge {
  const at = existing.findIndex((s) => s.name === added.name);
  const current = existing[at];
  const known = new Set(current?.publishers.map((p) => p.publisherId) ?? []);
  const fresh: WanBatchPublisherConfig[] = [];
  const ignoredPublisherIds: string[] = [];
  for (const p of added.publishers) {
    if (known.has(p.publisherId)) {
      ignoredPublisherIds.push(p.publisherId);
      continue;
    }
    known.add(p.publisherId);
    fresh.push(p);
  }
  const addedPublisherIds = fresh.map((p) => p.publisherId);
  if (current === undefined) {
    if (existing.length >= WAN_SCHEMES_MAX) throw invalid('name', `cannot add scheme ${JSON.stringify(added.name)}: at most ${WAN_SCHEMES_MAX} WAN replication schemes are allowed`);
    return { schemes: [...existing, { name: added.name, publishers: fresh }], addedPublisherIds, ignoredPublisherIds };
  }
  if (fresh.length === 0) return { schemes: [...existing], addedPublisherIds, ignoredPublisherIds };
  const total = current.publishers.length + fresh.length;
  if (total > WAN_PUBLISHERS_PER_SCHEME_MAX) {
    throw invalid(
      'batchPublishers',
      `cannot add ${fresh.length} publishers to scheme ${JSON.stringify(current.name)}: it has ${current.publishers.length}, and at most ${WAN_PUBLISHERS_PER_SCHEME_MAX} are allowed`,
    );
  }
  const merged: WanReplicationConfig = { name: current.name, publishers: [...current.publishers, ...fresh] };
  return { schemes: existing.map((s, i) => (i === at ? merged : s)), addedPublisherIds, ignoredPublisherIds };
}
