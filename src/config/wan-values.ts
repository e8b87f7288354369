// Value parsers and limits of a WAN `batch-publisher`, shared by the three places a publisher can be
// written: the XML file (schema-structures.ts), GRID_WANREPLICATION_* variables (env.ts) and the
// JSON of `addWanConfig` (src/wan/config-json.ts). One parser per value keeps the limits and the
// words of the messages the same whichever way the value came in.
//
// Millisecond values stop at 2147483647 (INT_MAX): that is also the longest delay a Node.js timer
// can hold, so a configured delay or timeout can always be armed as it is.
import {
  WAN_ACKNOWLEDGE_TYPES,
  WAN_CONSISTENCY_CHECK_STRATEGIES,
  WAN_PUBLISHER_STATES,
  WAN_QUEUE_FULL_BEHAVIORS,
  type WanBatchPublisherConfig,
} from './types.js';
import { INT_MAX, parseEndpoint, parseEnum, parseInteger, splitList, type Parsed } from './values.js';

/** `<wan-replication>` schemes per member, from the file, the environment and addWanConfig together. */
export const WAN_SCHEMES_MAX = 256;
/** `<batch-publisher>`s in one scheme (the JSON of addWanConfig has the same limit). */
export const WAN_PUBLISHERS_PER_SCHEME_MAX = 64;
/** `host:port` items in one `<target-endpoints>`: a few target members are enough, WAN does not discover the rest. */
export const WAN_TARGET_ENDPOINTS_MAX = 256;

export const parseWanBatchSize = (raw: string): Parsed<number> => parseInteger(raw, 1, 100000);
/** 0 sends a batch as soon as anything is queued. */
export const parseWanBatchMaxDelayMs = (raw: string): Parsed<number> => parseInteger(raw, 0, INT_MAX);
export const parseWanResponseTimeoutMs = (raw: string): Parsed<number> => parseInteger(raw, 1, INT_MAX);
export const parseWanQueueCapacity = (raw: string): Parsed<number> => parseInteger(raw, 1, INT_MAX);

type PublisherEnum<K extends keyof WanBatchPublisherConfig> = WanBatchPublisherConfig[K];

export const parseWanQueueFullBehavior = (raw: string): Parsed<PublisherEnum<'queueFullBehavior'>> => parseEnum(raw, WAN_QUEUE_FULL_BEHAVIORS);
export const parseWanAcknowledgeType = (raw: string): Parsed<PublisherEnum<'acknowledgeType'>> => parseEnum(raw, WAN_ACKNOWLEDGE_TYPES);
export const parseWanPublisherState = (raw: string): Parsed<PublisherEnum<'initialPublisherState'>> => parseEnum(raw, WAN_PUBLISHER_STATES);
export const parseWanConsistencyCheckStrategy = (raw: string): Parsed<PublisherEnum<'consistencyCheckStrategy'>> =>
  parseEnum(raw, WAN_CONSISTENCY_CHECK_STRATEGIES);

const ENDPOINT = 'host:port with a port 1..65535';

/**
 * A target endpoint list as written in `<target-endpoints>` (items separated by commas, semicolons
 * or whitespace). Every item is `host:port` with a port 1..65535, at least one and at most
 * WAN_TARGET_ENDPOINTS_MAX items, and no item twice. Items come back canonical (the port without
 * leading zeros), so two spellings of one endpoint count as a repeat. Hosts compare ignoring case;
 * names are not resolved, so `localhost:5701` and `127.0.0.1:5701` are two endpoints.
 */
export function parseWanTargetEndpoints(raw: string): Parsed<string[]> {
  const items = splitList(raw);
  if (items.length === 0) return { ok: false, expected: `at least one ${ENDPOINT}` };
  if (items.length > WAN_TARGET_ENDPOINTS_MAX) return { ok: false, expected: `at most ${WAN_TARGET_ENDPOINTS_MAX} endpoints (${items.length} given)` };
  const out: string[] = [];
  const seen = new Map<string, string>();
  for (const item of items) {
    const parsed = parseWanTargetEndpoint(item);
    if (!parsed.ok) return items.length === 1 ? parsed : { ok: false, expected: `${ENDPOINT} for every item (${JSON.stringify(item)} is not)` };
    const key = parsed.value.toLowerCase();
    const first = seen.get(key);
    if (first !== undefined) return { ok: false, expected: `distinct endpoints (${JSON.stringify(item)} repeats ${JSON.stringify(first)})` };
    seen.set(key, item);
    out.push(parsed.value);
  }
  return { ok: true, value: out };
}

/** One `host:port`; the port is digits only (no sign) and comes back without leading zeros. */
export function parseWanTargetEndpoint(raw: string): Parsed<string> {
  const s = raw.trim();
  const m = /^(.*):([0-9]{1,5})$/.exec(s);
  if (m === null || !parseEndpoint(s).ok) return { ok: false, expected: ENDPOINT };
  return { ok: true, value: `${m[1] ?? ''}:${Number(m[2])}` };
}
