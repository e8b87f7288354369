// `<map>`, `<queue>` and `<wan-replication>`: named, repeatable elements. A name may be exact or a
// pattern with one `*`; a name given twice is an error at its second place. The built-in `default`
// map and queue are kept unless the file declares its own.
import { defaultMap, defaultPublisher, defaultQueue, defaultWanRef, originKey, type DeepMutable, type Draft, type MapDraft, type Origins, type QueueDraft } from './draft.js';
import {
  EVICTION_POLICIES,
  MERGE_POLICIES,
  QUEUE_MERGE_POLICIES,
  type MergePolicyName,
  type QueueMergePolicyName,
  type WanBatchPublisherConfig,
  type WanReplicationConfig,
} from './types.js';
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
  WAN_PUBLISHERS_PER_SCHEME_MAX,
  WAN_SCHEMES_MAX,
} from './wan-values.js';
import type { ElementReader } from './xml-reader.js';
import { INT_MAX, parseBoolean, parseEnum, parseInteger, parseName, parseStructureName, splitList, type Parsed } from './values.js';

const backupCount = (raw: string): Parsed<number> => parseInteger(raw, 0, 6);
const nonNegative = (raw: string): Parsed<number> => parseInteger(raw, 0, INT_MAX);

/** Only PER_NODE is implemented; other reference policies get a message that says so. */
export function parseMaxSizePolicy(raw: string): Parsed<'PER_NODE'> {
  return raw.trim().toUpperCase() === 'PER_NODE' ? { ok: true, value: 'PER_NODE' } : { ok: false, expected: 'PER_NODE (only PER_NODE is supported)' };
}

export const parseEvictionPolicy = (raw: string): Parsed<(typeof EVICTION_POLICIES)[number]> => parseEnum(raw, EVICTION_POLICIES);
export const parseEvictionSize = (raw: string): Parsed<number> => parseInteger(raw, 1, INT_MAX);
export const parseMerkleDepth = (raw: string): Parsed<number> => parseInteger(raw, 2, 27);
export const parseQueueTtl = (raw: string): Parsed<number> => parseInteger(raw, -1, INT_MAX);
export { backupCount as parseBackupCount, nonNegative as parseNonNegative };

const JAVA_PACKAGE = /^com\.hazelcast\.spi\.merge\./;

/** A merge policy by simple name; the reference's Java package prefix is accepted and dropped. */
export function parseMergePolicy(raw: string): Parsed<MergePolicyName> {
  return parseEnum(raw.trim().replace(JAVA_PACKAGE, ''), MERGE_POLICIES);
}

/** A queue's merge policy: only PutIfAbsentMergePolicy and DiscardMergePolicy (a queue item has no hits or times). */
export function parseQueueMergePolicy(raw: string): Parsed<QueueMergePolicyName> {
  const simple = raw.trim().replace(JAVA_PACKAGE, '');
  const queue = parseEnum(simple, QUEUE_MERGE_POLICIES);
  if (queue.ok || !parseEnum(simple, MERGE_POLICIES).ok) return queue;
  return { ok: false, expected: `${QUEUE_MERGE_POLICIES.join(' or ')} (a queue accepts no other merge policy)` };
}

export const parseMergeBatchSize = (raw: string): Parsed<number> => parseInteger(raw, 1, 10000);

/** `<merge-policy batch-size="...">Name</merge-policy>`; an empty name keeps the default policy. */
function readMergePolicy<P extends MergePolicyName>(el: ElementReader, target: { policy: P; batchSize: number }, parse: (raw: string) => Parsed<P>): void {
  const mp = el.child('merge-policy', { attrs: ['batch-size'], text: true });
  if (mp === undefined) return;
  target.batchSize = mp.typedAttr('batch-size', parseMergeBatchSize, target.batchSize);
  if (mp.text() !== '') target.policy = mp.typedText(parse);
}

/** Reads the `name` attribute of a named element and rejects a name already used by a sibling. */
function uniqueName(el: ElementReader, seen: Map<string, string>): string {
  const name = el.requiredTypedAttr('name', parseStructureName);
  const first = seen.get(name);
  if (first !== undefined) el.fail(el.element, `<${el.name}>: name ${name} is given twice (first at ${first})`);
  seen.set(name, `${el.element.line}:${el.element.column}`);
  return name;
}

export function readMaps(grid: ElementReader, draft: Draft, origins: Origins): void {
  const maps: MapDraft[] = [];
  const seen = new Map<string, string>();
  for (const el of grid.children('map', {
    attrs: ['name'],
    one: ['backup-count', 'async-backup-count', 'time-to-live-seconds', 'max-idle-seconds', 'eviction', 'merkle-tree', 'data-persistence', 'merge-policy', 'wan-replication-ref'],
  })) {
    const m = defaultMap(uniqueName(el, seen));
    origins.set(originKey.map(m.name), el.where());
    m.backupCount = el.leaf('backup-count', backupCount, m.backupCount);
    m.asyncBackupCount = el.leaf('async-backup-count', backupCount, m.asyncBackupCount);
    m.timeToLiveSeconds = el.leaf('time-to-live-seconds', nonNegative, m.timeToLiveSeconds);
    m.maxIdleSeconds = el.leaf('max-idle-seconds', nonNegative, m.maxIdleSeconds);
    const ev = el.child('eviction', { attrs: ['eviction-policy', 'max-size-policy', 'size'] });
    if (ev !== undefined) {
      m.eviction.policy = ev.typedAttr('eviction-policy', parseEvictionPolicy, m.eviction.policy);
      m.eviction.maxSizePolicy = ev.typedAttr('max-size-policy', parseMaxSizePolicy, m.eviction.maxSizePolicy);
      m.eviction.size = ev.typedAttr('size', parseEvictionSize, m.eviction.size);
    }
    const merkle = el.child('merkle-tree', { attrs: ['enabled'], one: ['depth'] });
    if (merkle !== undefined) {
      m.merkleTree.enabled = merkle.typedAttr('enabled', parseBoolean, m.merkleTree.enabled);
      m.merkleTree.depth = merkle.leaf('depth', parseMerkleDepth, m.merkleTree.depth);
    }
    readDataPersistence(el, m.dataPersistence);
    readMergePolicy(el, m.mergePolicy, parseMergePolicy);
    const ref = el.child('wan-replication-ref', { attrs: ['name'], one: ['merge-policy-class-name', 'republishing-enabled'] });
    if (ref !== undefined) {
      origins.set(originKey.wanRef(m.name), ref.where());
      const r = defaultWanRef(ref.requiredTypedAttr('name', parseName));
      r.mergePolicy = ref.leaf('merge-policy-class-name', parseMergePolicy, r.mergePolicy);
      r.republishingEnabled = ref.leaf('republishing-enabled', parseBoolean, r.republishingEnabled);
      m.wanReplicationRef = r;
    }
    maps.push(m);
  }
  if (maps.length === 0) return;
  if (!maps.some((m) => m.name === 'default')) maps.unshift(defaultMap('default'));
  draft.maps = maps;
}

function readDataPersistence(el: ElementReader, target: { enabled: boolean; fsync: boolean }): void {
  const dp = el.child('data-persistence', { attrs: ['enabled', 'fsync'] });
  if (dp === undefined) return;
  target.enabled = dp.typedAttr('enabled', parseBoolean, target.enabled);
  target.fsync = dp.typedAttr('fsync', parseBoolean, target.fsync);
}

export function readQueues(grid: ElementReader, draft: Draft, origins: Origins): void {
  const queues: QueueDraft[] = [];
  const seen = new Map<string, string>();
  for (const el of grid.children('queue', {
    attrs: ['name'],
    one: ['max-size', 'backup-count', 'async-backup-count', 'empty-queue-ttl', 'data-persistence', 'merge-policy'],
  })) {
    const q = defaultQueue(uniqueName(el, seen));
    origins.set(originKey.queue(q.name), el.where());
    q.maxSize = el.leaf('max-size', nonNegative, q.maxSize);
    q.backupCount = el.leaf('backup-count', backupCount, q.backupCount);
    q.asyncBackupCount = el.leaf('async-backup-count', backupCount, q.asyncBackupCount);
    q.emptyQueueTtlSeconds = el.leaf('empty-queue-ttl', parseQueueTtl, q.emptyQueueTtlSeconds);
    readDataPersistence(el, q.dataPersistence);
    readMergePolicy(el, q.mergePolicy, parseQueueMergePolicy);
    queues.push(q);
  }
  if (queues.length === 0) return;
  if (!queues.some((q) => q.name === 'default')) queues.unshift(defaultQueue('default'));
  draft.queues = queues;
}

const PUBLISHER_CHILDREN = [
  'cluster-name',
  'publisher-id',
  'target-endpoints',
  'batch-size',
  'batch-max-delay-millis',
  'response-timeout-millis',
  'queue-capacity',
  'queue-full-behavior',
  'acknowledge-type',
  'initial-publisher-state',
  'sync',
] as const;

/**
 * `<wan-replication name>` schemes and their `<batch-publisher>`s. Every value is checked where it
 * is written (file:line:column); rules that an environment variable could break again (a
 * publisher without endpoints, too many publishers) are checked once more by validate.ts.
 */
export function readWanReplications(grid: ElementReader, draft: Draft, origins: Origins): void {
  const seen = new Map<string, string>();
  const schemes: DeepMutable<WanReplicationConfig>[] = [];
  for (const el of grid.children('wan-replication', { attrs: ['name'], many: ['batch-publisher'] })) {
    const name = el.requiredTypedAttr('name', parseName);
    const first = seen.get(name);
    if (first !== undefined) throw el.error(el.element, `<wan-replication>: name ${name} is given twice (first at ${first})`);
    if (schemes.length === WAN_SCHEMES_MAX) throw el.error(el.element, `<wan-replication name="${name}">: at most ${WAN_SCHEMES_MAX} schemes are allowed`);
    seen.set(name, `${el.element.line}:${el.element.column}`);
    origins.set(originKey.wan(name), el.where());
    const scheme: DeepMutable<WanReplicationConfig> = { name, publishers: [] };
    for (const bp of el.children('batch-publisher', { one: PUBLISHER_CHILDREN })) {
      if (scheme.publishers.length === WAN_PUBLISHERS_PER_SCHEME_MAX) {
        throw bp.error(bp.element, `<wan-replication name="${name}">: at most ${WAN_PUBLISHERS_PER_SCHEME_MAX} <batch-publisher>s are allowed in one scheme`);
      }
      const p = readPublisher(bp);
      if (scheme.publishers.some((o) => o.publisherId === p.publisherId)) {
        throw bp.error(bp.element, `<batch-publisher>: publisher id ${p.publisherId} is used twice in <wan-replication name="${name}">`);
      }
      origins.set(originKey.wanPublisher(name, p.publisherId), bp.where());
      scheme.publishers.push(p);
    }
    schemes.push(scheme);
  }
  draft.wanReplications = schemes;
}

function readPublisher(bp: ElementReader): DeepMutable<WanBatchPublisherConfig> {
  const p = defaultPublisher();
  p.clusterName = bp.leaf('cluster-name', parseName, p.clusterName);
  // The id names the publisher in REST calls and metrics; without one it is the target's cluster name.
  p.publisherId = bp.leaf('publisher-id', parseName, p.clusterName);
  const endpoints = bp.child('target-endpoints', { text: true });
  if (endpoints === undefined || splitList(endpoints.text()).length === 0) {
    throw bp.error(endpoints?.element ?? bp.element, '<batch-publisher> needs <target-endpoints> with at least one host:port');
  }
  p.targetEndpoints = endpoints.typedText(parseWanTargetEndpoints);
  p.batchSize = bp.leaf('batch-size', parseWanBatchSize, p.batchSize);
  p.batchMaxDelayMs = bp.leaf('batch-max-delay-millis', parseWanBatchMaxDelayMs, p.batchMaxDelayMs);
  p.responseTimeoutMs = bp.leaf('response-timeout-millis', parseWanResponseTimeoutMs, p.responseTimeoutMs);
  p.queueCapacity = bp.leaf('queue-capacity', parseWanQueueCapacity, p.queueCapacity);
  p.queueFullBehavior = bp.leaf('queue-full-behavior', parseWanQueueFullBehavior, p.queueFullBehavior);
  p.acknowledgeType = bp.leaf('acknowledge-type', parseWanAcknowledgeType, p.acknowledgeType);
  p.initialPublisherState = bp.leaf('initial-publisher-state', parseWanPublisherState, p.initialPublisherState);
  const sync = bp.child('sync', { one: ['consistency-check-strategy'] });
  if (sync !== undefined) p.consistencyCheckStrategy = sync.leaf('consistency-check-strategy', parseWanConsistencyCheckStrategy, p.consistencyCheckStrategy);
  return p;
}
