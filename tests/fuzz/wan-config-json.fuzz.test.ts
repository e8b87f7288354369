// Seeded fuzzing of parseWanConfigJson (src/wan/config-json.ts), the JSON that addWanConfig takes
// from a REST body. Inputs: valid schemes (names, integer codes, the reference's ignored fields) that
// are then mutated as text (spans deleted, duplicated, fragments inserted, characters replaced) or
// as values (a field dropped, replaced by a random JSON value, an unknown key added, arrays grown).
// Checks: the parser returns a scheme or throws GridError ERR_WAN_CONFIG_INVALID, nothing else; an
// accepted scheme keeps the invariants (at most 64 publishers with distinct ids, endpoints present,
// distinct, host:port) and survives wanConfigToJson → parse unchanged; merging it twice is
// idempotent; both outcomes occur. FUZZ_SEED / FUZZ_ITERATIONS as usual.
import assert from 'node:assert/strict';
import { WAN_PUBLISHERS_PER_SCHEME_MAX, parseWanTargetEndpoint } from '../../src/config/wan-values.js';
import type { WanReplicationConfig } from '../../src/config/types.js';
import { mergeWanConfig, parseWanConfigJson, WAN_JSON_ENUM_CODES, WAN_JSON_IGNORED_PUBLISHER_FIELDS, wanConfigToJson } from '../../src/wan/config-json.js';
import { GridError } from '../../src/util/errors.js';
import type { SeededRandom } from '../../src/util/prng.js';
import { fuzz } from '../harness/fuzz.js';

const FUZZ = fuzz(77_031, 3_000);

const pick = <T>(rnd: SeededRandom, items: readonly T[]): T => items[rnd.nextInt(items.length)] as T;

const NAMES = ['b', 'to-b', 'B', 'dr', ' c ', 'é', '\u{1F600}', 'x'.repeat(255), '', ' ', 'a\u0000b', '__proto__', 'constructor'];
const ENDPOINTS = ['h:1', 'h:65535', '[::1]:5701', '10.0.0.1:5701', 'a.b:02', 'h:0', 'h', ':1', 'h:+1', '::1', 'h:1,h:1', 'h:1 h:2', ''];
const KEYS = ['name', 'batchPublishers', 'customPublishers', 'consumer', 'clusterName', 'publisherId', 'targetEndpoints', 'batchSize', 'batchMaxDelayMillis',
  'responseTimeoutMillis', 'queueCapacity', 'queueFullBehavior', 'acknowledgeType', 'initialPublisherState', 'sync', 'consistencyCheckStrategy',
  ...WAN_JSON_IGNORED_PUBLISHER_FIELDS, '__proto__', 'toString', 'x'];
const FRAGMENTS = ['{', '}', '[', ']', ',', ':', '"', '\\', '\\u0000', '\\ud800', 'null', 'true', '-', '1e999', '0.5', '-0', '"name"', '\u2028', '\uFEFF', ' '];

function randomValue(rnd: SeededRandom, depth = 0): unknown {
  switch (rnd.nextInt(depth > 2 ? 7 : 9)) {
    case 0: return null;
    case 1: return rnd.next() < 0.5;
    case 2: return pick(rnd, [0, 1, 2, 3, -1, 0.5, 1e21, 2147483647, 2147483648, 100000, 100001, -0, Number.MAX_SAFE_INTEGER]);
    case 3: return pick(rnd, NAMES);
    case 4: return pick(rnd, ENDPOINTS);
    case 5: return pick(rnd, [...WAN_JSON_ENUM_CODES.queueFullBehavior, ...WAN_JSON_ENUM_CODES.initialPublisherState, 'paused', 'MERKLE_TREES', 'ack_on_receipt']);
    case 6: return rnd.nextInt(4);
    case 7: return Array.from({ length: rnd.nextInt(4) }, () => randomValue(rnd, depth + 1));
    default: {
      const o: Record<string, unknown> = {};
      for (let i = rnd.nextInt(4); i > 0; i--) o[pick(rnd, KEYS)] = randomValue(rnd, depth + 1);
      return o;
    }
  }
}

function validPublisher(rnd: SeededRandom, i: number): Record<string, unknown> {
  const p: Record<string, unknown> = { clusterName: pick(rnd, ['b', 'c', 'dr']), publisherId: `p${i}`, targetEndpoints: rnd.next() < 0.5 ? 'h:1,h:2' : ['h:1', '[::1]:5701'] };
  const enumOf = (codes: readonly string[]): unknown => (rnd.next() < 0.5 ? rnd.nextInt(codes.length) : pick(rnd, codes));
  if (rnd.next() < 0.5) p['batchSize'] = 1 + rnd.nextInt(100000);
  if (rnd.next() < 0.5) p['queueCapacity'] = 1 + rnd.nextInt(1000000);
  if (rnd.next() < 0.5) p['batchMaxDelayMillis'] = rnd.nextInt(5000);
  if (rnd.next() < 0.5) p['responseTimeoutMillis'] = 1 + rnd.nextInt(60000);
  if (rnd.next() < 0.5) p['queueFullBehavior'] = enumOf(WAN_JSON_ENUM_CODES.queueFullBehavior);
  if (rnd.next() < 0.5) p['acknowledgeType'] = enumOf(WAN_JSON_ENUM_CODES.acknowledgeType);
  if (rnd.next() < 0.5) p['initialPublisherState'] = enumOf(WAN_JSON_ENUM_CODES.initialPublisherState);
  if (rnd.next() < 0.5) p['sync'] = { consistencyCheckStrategy: enumOf(WAN_JSON_ENUM_CODES.consistencyCheckStrategy) };
  if (rnd.next() < 0.3) p[pick(rnd, WAN_JSON_IGNORED_PUBLISHER_FIELDS)] = randomValue(rnd);
  return p;
}

function validScheme(rnd: SeededRandom): Record<string, unknown> {
  const s: Record<string, unknown> = { name: pick(rnd, ['to-b', 'w', 'é']), batchPublishers: Array.from({ length: rnd.nextInt(4) }, (_, i) => validPublisher(rnd, i)) };
  if (rnd.next() < 0.3) s['customPublishers'] = [];
  if (rnd.next() < 0.3) s['consumer'] = randomValue(rnd);
  return s;
}

/** Replaces, drops or adds one value somewhere in the tree (in place). */
function mutateValue(rnd: SeededRandom, v: unknown): void {
  const containers: (Record<string, unknown> | unknown[])[] = [];
  const walk = (x: unknown): void => {
    if (typeof x !== 'object' || x === null) return;
    containers.push(x as Record<string, unknown> | unknown[]);
    for (const c of Object.values(x)) walk(c);
  };
  walk(v);
  const target = pick(rnd, containers);
  if (Array.isArray(target)) {
    const r = rnd.next();
    if (r < 0.3 && target.length > 0) target.splice(rnd.nextInt(target.length), 1);
    else if (r < 0.5 && target.length > 0) target.push(structuredClone(target[rnd.nextInt(target.length)]));
    else if (r < 0.55) for (let i = 0; i < 70; i++) target.push(structuredClone(target[0] ?? 1));
    else target[rnd.nextInt(target.length + 1)] = randomValue(rnd);
    return;
  }
  const keys = Object.keys(target);
  const r = rnd.next();
  if (r < 0.3 && keys.length > 0) delete target[pick(rnd, keys)];
  else if (r < 0.7 && keys.length > 0) target[pick(rnd, keys)] = randomValue(rnd);
  else Object.defineProperty(target, pick(rnd, KEYS), { value: randomValue(rnd), enumerable: true, writable: true, configurable: true });
}

function mutateText(rnd: SeededRandom, s: string): string {
  let out = s;
  for (let e = 1 + rnd.nextInt(4); e > 0; e--) {
    const at = rnd.nextInt(out.length + 1);
    const r = rnd.next();
    if (r < 0.25) out = out.slice(0, at) + out.slice(at + 1 + rnd.nextInt(8));
    else if (r < 0.5) out = out.slice(0, at) + pick(rnd, FRAGMENTS) + out.slice(at);
    else if (r < 0.7) out = out.slice(0, at) + String.fromCharCode(rnd.nextInt(0x10000)) + out.slice(at + 1);
    else if (r < 0.9) {
      const from = rnd.nextInt(out.length + 1);
      out = out.slice(0, at) + out.slice(from, from + rnd.nextInt(60)) + out.slice(at);
    } else out = out.slice(0, at);
  }
  return out;
}

function checkAccepted(scheme: WanReplicationConfig, text: string): void {
  assert.ok(scheme.publishers.length <= WAN_PUBLISHERS_PER_SCHEME_MAX, text);
  const ids = scheme.publishers.map((p) => p.publisherId);
  assert.equal(new Set(ids).size, ids.length, `duplicate ids accepted: ${text}`);
  for (const p of scheme.publishers) {
    assert.ok(p.targetEndpoints.length > 0, text);
    assert.equal(new Set(p.targetEndpoints.map((e) => e.toLowerCase())).size, p.targetEndpoints.length, text);
    for (const e of p.targetEndpoints) assert.ok(parseWanTargetEndpoint(e).ok, `bad endpoint ${e} accepted: ${text}`);
    assert.ok(Number.isInteger(p.batchSize) && p.batchSize >= 1 && p.batchSize <= 100000, text);
    assert.ok(Number.isInteger(p.queueCapacity) && p.queueCapacity >= 1, text);
  }
  assert.deepEqual(parseWanConfigJson(wanConfigToJson(scheme), { bytesMax: 1 << 24 }), scheme, `round trip of ${text}`);
  const once = mergeWanConfig([], scheme);
  const twice = mergeWanConfig(once.schemes, scheme);
  assert.deepEqual(twice.schemes, once.schemes);
  assert.deepEqual(twice.addedPublisherIds, []);
}

/** 'accepted' or 'refused'; anything but a GridError ERR_WAN_CONFIG_INVALID fails the test. */
function attempt(text: string): 'accepted' | 'refused' {
  let scheme: WanReplicationConfig;
  try {
    scheme = parseWanConfigJson(text);
  } catch (e) {
    if (!(e instanceof GridError) || e.code !== 'ERR_WAN_CONFIG_INVALID') {
      assert.fail(`threw ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)} on ${JSON.stringify(text.slice(0, 300))}`);
    }
    assert.doesNotMatch(e.message, /[\r\n]/);
    return 'refused';
  }
  checkAccepted(scheme, text);
  return 'accepted';
}

FUZZ.case('valid schemes mutated as values: a scheme or a GridError, never anything else', (rnd) => {
  const seen = { accepted: 0, refused: 0 };
  for (let i = 0; i < FUZZ.iterations; i++) {
    const v = validScheme(rnd);
    for (let m = rnd.nextInt(3); m > 0; m--) mutateValue(rnd, v);
    seen[attempt(JSON.stringify(v))]++;
  }
  assert.ok(seen.accepted > FUZZ.iterations / 10 && seen.refused > FUZZ.iterations / 10, JSON.stringify(seen));
});

FUZZ.case('valid schemes mutated as text: a scheme or a GridError, never anything else', (rnd) => {
  const seen = { accepted: 0, refused: 0 };
  for (let i = 0; i < FUZZ.iterations; i++) seen[attempt(mutateText(rnd, JSON.stringify(validScheme(rnd))))]++;
  assert.ok(seen.accepted > 0 && seen.refused > 0, JSON.stringify(seen));
});

FUZZ.case('soups of JSON fragments and deep or huge texts are refused cleanly', (rnd) => {
  for (let i = 0; i < FUZZ.iterations / 10; i++) {
    let s = '';
    for (let n = rnd.nextInt(80); n > 0; n--) s += pick(rnd, FRAGMENTS);
    attempt(s);
    attempt(`{"name":"w","consumer":${'['.repeat(rnd.nextInt(40))}`);
    attempt(`{"name":"w","consumer":"${'x'.repeat(60000 + rnd.nextInt(10000))}"}`);
  }
});
