// Checks src/wan/config-json.ts, the JSON of addWanConfig: every field by name and by the
// reference's integer codes, defaults equal to the XML's, the fields accepted and ignored, every kind
// of refusal (each a GridError ERR_WAN_CONFIG_INVALID, 400, whose message starts with the field's
// path), the size and nesting limits checked before parsing, wanConfigToJson round trips (also of a
// scheme read from XML), and mergeWanConfig's rule: new scheme added, new ids appended, existing
// ids ignored and never modified, idempotent, limits kept.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config/load.js';
import type { WanBatchPublisherConfig, WanReplicationConfig } from '../../src/config/types.js';
import { WAN_PUBLISHERS_PER_SCHEME_MAX, WAN_SCHEMES_MAX, WAN_TARGET_ENDPOINTS_MAX } from '../../src/config/wan-values.js';
import {
  mergeWanConfig,
  parseWanConfigJson,
  WAN_CONFIG_JSON_BYTES_MAX,
  WAN_CONFIG_JSON_DEPTH_MAX,
  WAN_JSON_ENUM_CODES,
  WAN_JSON_IGNORED_PUBLISHER_FIELDS,
  wanConfigToJson,
  wanConfigToJsonValue,
} from '../../src/wan/config-json.js';
import { GridError } from '../../src/util/errors.js';

const DEFAULTS = {
  batchSize: 500,
  batchMaxDelayMs: 1000,
  responseTimeoutMs: 60000,
  queueCapacity: 10000,
  queueFullBehavior: 'DISCARD_AFTER_MUTATION',
  acknowledgeType: 'ACK_ON_OPERATION_COMPLETE',
  initialPublisherState: 'REPLICATING',
  consistencyCheckStrategy: 'NONE',
} as const;

const parse = (value: unknown): WanReplicationConfig => parseWanConfigJson(JSON.stringify(value));
const minimal = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({ clusterName: 'b', targetEndpoints: 'h:1', ...extra });
const scheme = (...publishers: unknown[]): Record<string, unknown> => ({ name: 'to-b', batchPublishers: publishers });

/** The message of the GridError that parsing `value` (or a text) throws; checks code and status. */
function refusal(value: unknown, asText = false): string {
  try {
    if (asText) parseWanConfigJson(value as string);
    else parse(value);
  } catch (e) {
    if (!(e instanceof GridError)) throw e;
    assert.equal(e.code, 'ERR_WAN_CONFIG_INVALID');
    assert.equal(e.status, 400);
    assert.doesNotMatch(e.message, /[\r\n]/, 'one line');
    return e.message;
  }
  return assert.fail('expected a refusal');
}

const publisher = (value: unknown): WanBatchPublisherConfig => {
  const p = parse(scheme(value)).publishers[0];
  assert.ok(p !== undefined);
  return p;
};

// ---------------------------------------------------------------- fields

test('every field by name; defaults as in the XML; publisherId defaults to clusterName', () => {
  assert.deepEqual(publisher(minimal()), { ...DEFAULTS, clusterName: 'b', publisherId: 'b', targetEndpoints: ['h:1'] });
  assert.deepEqual(
    publisher({
      clusterName: 'b',
      publisherId: 'b-main',
      targetEndpoints: '10.0.0.1:5701, 10.0.0.2:5701',
      batchSize: 100,
      batchMaxDelayMillis: 0,
      responseTimeoutMillis: 500,
      queueCapacity: 50,
      queueFullBehavior: 'THROW_EXCEPTION_ONLY_IF_REPLICATION_ACTIVE',
      acknowledgeType: 'ACK_ON_RECEIPT',
      initialPublisherState: 'PAUSED',
      sync: { consistencyCheckStrategy: 'MERKLE_TREES' },
    }),
    {
      clusterName: 'b',
      publisherId: 'b-main',
      targetEndpoints: ['10.0.0.1:5701', '10.0.0.2:5701'],
      batchSize: 100,
      batchMaxDelayMs: 0,
      responseTimeoutMs: 500,
      queueCapacity: 50,
      queueFullBehavior: 'THROW_EXCEPTION_ONLY_IF_REPLICATION_ACTIVE',
      acknowledgeType: 'ACK_ON_RECEIPT',
      initialPublisherState: 'PAUSED',
      consistencyCheckStrategy: 'MERKLE_TREES',
    },
  );
  // Limits at their edges.
  const edges = publisher(minimal({ batchSize: 100000, batchMaxDelayMillis: 2147483647, responseTimeoutMillis: 1, queueCapacity: 2147483647 }));
  assert.deepEqual([edges.batchSize, edges.batchMaxDelayMs, edges.responseTimeoutMs, edges.queueCapacity], [100000, 2147483647, 1, 2147483647]);
  // Names are trimmed like the XML's; a scheme may come without publishers (the reference allows it).
  assert.deepEqual(parse({ name: ' to-b ' }), { name: 'to-b', publishers: [] });
  assert.deepEqual(parse({ name: 'w', batchPublishers: [] }), { name: 'w', publishers: [] });
  // null is absent, as in the reference's reader.
  assert.deepEqual(publisher(minimal({ publisherId: null, batchSize: null, sync: null, queueFullBehavior: null })), publisher(minimal()));
  assert.deepEqual(parse({ name: 'w', batchPublishers: null, customPublishers: null, consumer: null }).publishers, []);
});

test('enums: the reference integer codes, and names in any letter case', () => {
  const codes = WAN_JSON_ENUM_CODES;
  assert.deepEqual(codes.initialPublisherState, ['REPLICATING', 'PAUSED', 'STOPPED']);
  assert.deepEqual(codes.queueFullBehavior, ['DISCARD_AFTER_MUTATION', 'THROW_EXCEPTION', 'THROW_EXCEPTION_ONLY_IF_REPLICATION_ACTIVE']);
  assert.deepEqual(codes.consistencyCheckStrategy, ['NONE', 'MERKLE_TREES']);
  assert.deepEqual(codes.acknowledgeType, ['ACK_ON_RECEIPT', 'ACK_ON_OPERATION_COMPLETE']);
  codes.initialPublisherState.forEach((name, code) => assert.equal(publisher(minimal({ initialPublisherState: code })).initialPublisherState, name));
  codes.queueFullBehavior.forEach((name, code) => assert.equal(publisher(minimal({ queueFullBehavior: code })).queueFullBehavior, name));
  codes.acknowledgeType.forEach((name, code) => assert.equal(publisher(minimal({ acknowledgeType: code })).acknowledgeType, name));
  codes.consistencyCheckStrategy.forEach((name, code) => assert.equal(publisher(minimal({ sync: { consistencyCheckStrategy: code } })).consistencyCheckStrategy, name));
  assert.equal(publisher(minimal({ initialPublisherState: 'stopped' })).initialPublisherState, 'STOPPED');
  assert.equal(publisher(minimal({ acknowledgeType: 'Ack_On_Receipt' })).acknowledgeType, 'ACK_ON_RECEIPT');
  assert.equal(publisher(minimal({ sync: { consistencyCheckStrategy: 'merkle_trees' } })).consistencyCheckStrategy, 'MERKLE_TREES');
});

test('targetEndpoints: the reference comma string or an array of strings, checked like the XML', () => {
  assert.deepEqual(publisher(minimal({ targetEndpoints: 'a:1,b:2 ; [::1]:3' })).targetEndpoints, ['a:1', 'b:2', '[::1]:3']);
  assert.deepEqual(publisher(minimal({ targetEndpoints: ['a:1', ' b:02 '] })).targetEndpoints, ['a:1', 'b:2']);
  const max = Array.from({ length: WAN_TARGET_ENDPOINTS_MAX }, (_, i) => `h${i}:1`);
  assert.equal(publisher(minimal({ targetEndpoints: max })).targetEndpoints.length, WAN_TARGET_ENDPOINTS_MAX);
  const at = 'batchPublishers[0].targetEndpoints';
  assert.equal(refusal(scheme({ clusterName: 'b' })), `${at}: required: at least one host:port`);
  assert.equal(refusal(scheme(minimal({ targetEndpoints: '' }))), `${at}: expected at least one host:port with a port 1..65535, got ""`);
  assert.equal(refusal(scheme(minimal({ targetEndpoints: [] }))), `${at}: expected at least one host:port with a port 1..65535, got []`);
  assert.equal(refusal(scheme(minimal({ targetEndpoints: 'h' }))), `${at}: expected host:port with a port 1..65535, got "h"`);
  assert.equal(refusal(scheme(minimal({ targetEndpoints: 'a:1,b:0' }))), `${at}: expected host:port with a port 1..65535 for every item ("b:0" is not), got "a:1,b:0"`);
  assert.equal(refusal(scheme(minimal({ targetEndpoints: 'a:1,A:1' }))), `${at}: expected distinct endpoints ("A:1" repeats "a:1"), got "a:1,A:1"`);
  assert.match(refusal(scheme(minimal({ targetEndpoints: ['a:1', 'a:01'] }))), /targetEndpoints: expected distinct endpoints \("a:01" repeats "a:1"\)/);
  assert.equal(refusal(scheme(minimal({ targetEndpoints: ['a:1', 5] }))), `${at}[1]: expected a string: host:port with a port 1..65535, got 5`);
  assert.equal(refusal(scheme(minimal({ targetEndpoints: ['a:1', 'b:1,c:1'] }))), `${at}[1]: expected host:port with a port 1..65535, got "b:1,c:1"`);
  assert.equal(refusal(scheme(minimal({ targetEndpoints: 5701 }))), `${at}: expected a comma-separated string or an array of host:port strings, got 5701`);
  assert.equal(refusal(scheme(minimal({ targetEndpoints: [...max, 'x:1'] }))), `${at}: expected at most ${WAN_TARGET_ENDPOINTS_MAX} endpoints, got ${WAN_TARGET_ENDPOINTS_MAX + 1}`);
  assert.match(refusal(scheme(minimal({ targetEndpoints: [...max, 'x:1'].join(',') }))), new RegExp(`expected at most ${WAN_TARGET_ENDPOINTS_MAX} endpoints \\(${WAN_TARGET_ENDPOINTS_MAX + 1} given\\)`));
});

test("the reference's other publisher fields are accepted and ignored; customPublishers empty; consumer ignored", () => {
  const reference = {
    name: 'to-b',
    batchPublishers: [
      {
        clusterName: 'b',
        publisherId: 'b',
        batchSize: 500,
        batchMaxDelayMillis: 1000,
        responseTimeoutMillis: 60000,
        acknowledgeType: 1,
        initialPublisherState: 0,
        snapshotEnabled: true,
        idleMaxParkNs: 250000000,
        idleMinParkNs: 10000000,
        maxConcurrentInvocations: 4,
        discoveryPeriodSeconds: 10,
        useEndpointPrivateAddress: false,
        queueFullBehavior: 0,
        maxTargetEndpoints: 2147483647,
        queueCapacity: 10000,
        targetEndpoints: '127.0.0.1:5801',
        aws: { enabled: false, usePublicIp: false, properties: {} },
        gcp: { enabled: false },
        azure: { enabled: false },
        kubernetes: { enabled: false },
        eureka: { enabled: false },
        discovery: { nodeFilterClass: null, discoveryStrategy: [{ className: 'x', properties: { a: '1' } }] },
        sync: { consistencyCheckStrategy: 0 },
        endpoint: 'wan',
        properties: { custom: 'value' },
      },
    ],
    customPublishers: [],
    consumer: { className: 'x', persistWanReplicatedData: false, properties: {} },
  };
  assert.deepEqual(parse(reference), { name: 'to-b', publishers: [{ ...DEFAULTS, clusterName: 'b', publisherId: 'b', targetEndpoints: ['127.0.0.1:5801'] }] });
  assert.deepEqual([...WAN_JSON_IGNORED_PUBLISHER_FIELDS].sort(), Object.keys(reference.batchPublishers[0] ?? {}).filter((k) => !wanFieldNames().includes(k)).sort(), 'the list names exactly the extra fields');
  assert.equal(refusal({ name: 'w', customPublishers: [{ className: 'x' }] }), 'customPublishers: custom publishers are not supported, only batchPublishers');
  assert.equal(refusal({ name: 'w', customPublishers: {} }), 'customPublishers: expected an empty array, got {}');
});

function wanFieldNames(): string[] {
  return Object.keys(wanConfigToJsonValue({ name: 'x', publishers: [{ ...DEFAULTS, clusterName: 'b', publisherId: 'b', targetEndpoints: ['h:1'] }] }).batchPublishers[0] ?? {});
}

// ---------------------------------------------------------------- refusals

test('refusals name the field: required fields, wrong types, ranges, enums', () => {
  const p = 'batchPublishers[1]';
  const second = (extra: Record<string, unknown>): string => refusal(scheme(minimal({ publisherId: 'first' }), minimal(extra)));
  assert.equal(refusal({ batchPublishers: [] }), 'name: required: the name of the WAN replication scheme');
  assert.equal(refusal({ name: null }), 'name: required: the name of the WAN replication scheme');
  assert.equal(refusal({ name: '' }), 'name: expected a non-empty name of at most 255 bytes (UTF-8) of printable characters, got ""');
  assert.equal(refusal({ name: 7 }), 'name: expected a string: a non-empty name of at most 255 bytes (UTF-8) of printable characters, got 7');
  assert.match(refusal({ name: 'x'.repeat(256) }), /^name: expected a non-empty name of at most 255 bytes/);
  assert.equal(refusal(scheme({ targetEndpoints: 'h:1' })), 'batchPublishers[0].clusterName: required: the target cluster name');
  assert.equal(second({ clusterName: ['b'] }), `${p}.clusterName: expected a string: a non-empty name of at most 255 bytes (UTF-8) of printable characters, got ["b"]`);
  assert.equal(second({ publisherId: '  ' }), `${p}.publisherId: expected a non-empty name of at most 255 bytes (UTF-8) of printable characters, got "  "`);
  assert.equal(second({ queueCapacity: 'x' }), `${p}.queueCapacity: expected an integer >= 1, got "x"`);
  assert.equal(second({ queueCapacity: '500' }), `${p}.queueCapacity: expected an integer >= 1, got "500"`, 'a string of digits is the wrong type');
  assert.equal(second({ queueCapacity: 0 }), `${p}.queueCapacity: expected an integer >= 1, got 0`);
  assert.equal(second({ queueCapacity: 2147483648 }), `${p}.queueCapacity: expected an integer >= 1, got 2147483648`);
  assert.equal(second({ batchSize: 0 }), `${p}.batchSize: expected an integer 1..100000, got 0`);
  assert.equal(second({ batchSize: 100001 }), `${p}.batchSize: expected an integer 1..100000, got 100001`);
  assert.equal(second({ batchSize: 1.5 }), `${p}.batchSize: expected an integer 1..100000, got 1.5`);
  assert.equal(second({ batchSize: true }), `${p}.batchSize: expected an integer 1..100000, got true`);
  assert.equal(second({ batchMaxDelayMillis: -1 }), `${p}.batchMaxDelayMillis: expected an integer >= 0, got -1`);
  assert.equal(second({ responseTimeoutMillis: 0 }), `${p}.responseTimeoutMillis: expected an integer >= 1, got 0`);
  assert.equal(refusal('{"name":"w","batchPublishers":[{"clusterName":"b","targetEndpoints":"h:1","batchSize":1e400}]}', true), 'batchPublishers[0].batchSize: expected an integer 1..100000, got Infinity');
  assert.equal(second({ initialPublisherState: 3 }), `${p}.initialPublisherState: expected an integer code 0..2 (0 REPLICATING, 1 PAUSED, 2 STOPPED) or a name, got 3`);
  assert.equal(second({ initialPublisherState: -1 }), `${p}.initialPublisherState: expected an integer code 0..2 (0 REPLICATING, 1 PAUSED, 2 STOPPED) or a name, got -1`);
  assert.equal(second({ initialPublisherState: 0.5 }), `${p}.initialPublisherState: expected an integer code 0..2 (0 REPLICATING, 1 PAUSED, 2 STOPPED) or a name, got 0.5`);
  assert.equal(
    second({ initialPublisherState: 'PAUSE' }),
    `${p}.initialPublisherState: expected one of REPLICATING, PAUSED, STOPPED (did you mean PAUSED?), or an integer code (0 REPLICATING, 1 PAUSED, 2 STOPPED), got "PAUSE"`,
  );
  assert.equal(second({ acknowledgeType: '1' }), `${p}.acknowledgeType: expected one of ACK_ON_OPERATION_COMPLETE, ACK_ON_RECEIPT, or an integer code (0 ACK_ON_RECEIPT, 1 ACK_ON_OPERATION_COMPLETE), got "1"`);
  assert.equal(second({ queueFullBehavior: {} }), `${p}.queueFullBehavior: expected a name or an integer code (0 DISCARD_AFTER_MUTATION, 1 THROW_EXCEPTION, 2 THROW_EXCEPTION_ONLY_IF_REPLICATION_ACTIVE), got {}`);
  assert.equal(second({ sync: 'MERKLE_TREES' }), `${p}.sync: expected an object, got "MERKLE_TREES"`);
  assert.equal(second({ sync: { consistencyCheckStrategy: 2 } }), `${p}.sync.consistencyCheckStrategy: expected an integer code 0..1 (0 NONE, 1 MERKLE_TREES) or a name, got 2`);
  assert.equal(refusal({ name: 'w', batchPublishers: {} }), 'batchPublishers: expected an array, got {}');
  assert.equal(refusal({ name: 'w', batchPublishers: [minimal(), 'b'] }), 'batchPublishers[1]: expected an object, got "b"');
});

test('refusals: unknown fields (with a hint), duplicate publisher ids, counts', () => {
  assert.equal(refusal({ name: 'w', nmae: 'x' }), 'nmae: unknown field (did you mean name?)');
  assert.equal(refusal({ name: 'w', batchPublisher: [] }), 'batchPublisher: unknown field (did you mean batchPublishers?)');
  assert.equal(refusal({ name: 'w', __proto__x: 1 }), '__proto__x: unknown field');
  assert.equal(refusal(JSON.parse('{"name":"w","__proto__":{}}')), '__proto__: unknown field');
  assert.equal(refusal(scheme(minimal({ queueCapasity: 5 }))), 'batchPublishers[0].queueCapasity: unknown field (did you mean queueCapacity?)');
  assert.equal(refusal(scheme(minimal({ snapshotEnable: true }))), 'batchPublishers[0].snapshotEnable: unknown field (did you mean snapshotEnabled?)');
  assert.equal(refusal(scheme(minimal({ wanSync: {} }))), 'batchPublishers[0].wanSync: unknown field');
  assert.equal(refusal(scheme(minimal({ sync: { consistencyCheck: 1 } }))), 'batchPublishers[0].sync.consistencyCheck: unknown field (did you mean consistencyCheckStrategy?)');
  assert.equal(refusal(scheme(minimal({ publisherId: 'p' }), minimal({ clusterName: 'c', publisherId: 'p' }))), 'batchPublishers[1].publisherId: publisher id "p" is used twice (first by batchPublishers[0])');
  assert.equal(refusal(scheme(minimal(), minimal({ targetEndpoints: 'h:2' }))), 'batchPublishers[1]: publisher id "b" (its clusterName, as no publisherId is given) is used twice (first by batchPublishers[0])');
  // Ids are compared exactly: "B" and "b" are two publishers, as in the XML.
  assert.equal(parse(scheme(minimal(), minimal({ clusterName: 'B' }))).publishers.length, 2);
  const many = (n: number): unknown => scheme(...Array.from({ length: n }, (_, i) => minimal({ publisherId: `p${i}` })));
  assert.equal(parse(many(WAN_PUBLISHERS_PER_SCHEME_MAX)).publishers.length, WAN_PUBLISHERS_PER_SCHEME_MAX);
  assert.equal(refusal(many(WAN_PUBLISHERS_PER_SCHEME_MAX + 1)), `batchPublishers: at most ${WAN_PUBLISHERS_PER_SCHEME_MAX} publishers are allowed in one scheme, got ${WAN_PUBLISHERS_PER_SCHEME_MAX + 1}`);
});

test('refusals of the text: not JSON, not an object, too large (before parsing), nested too deep', () => {
  assert.match(refusal('{"name":', true), /^the WAN configuration is not valid JSON \(/);
  assert.match(refusal('', true), /^the WAN configuration is not valid JSON/);
  assert.equal(refusal('[]', true), 'the WAN configuration must be a JSON object, got []');
  assert.equal(refusal('"w"', true), 'the WAN configuration must be a JSON object, got "w"');
  assert.equal(refusal('null', true), 'the WAN configuration must be a JSON object, got null');
  // Size in UTF-8 bytes: 64 KiB exactly passes the size check, one byte more does not.
  const pad = (bytes: number, char = ' '): string => {
    const base = JSON.stringify({ name: 'w' });
    return base.slice(0, -1) + char.repeat(bytes - base.length) + '}';
  };
  assert.deepEqual(parseWanConfigJson(pad(WAN_CONFIG_JSON_BYTES_MAX)), { name: 'w', publishers: [] });
  assert.equal(refusal(pad(WAN_CONFIG_JSON_BYTES_MAX + 1), true), `the WAN configuration JSON is ${WAN_CONFIG_JSON_BYTES_MAX + 1} bytes; at most 65536 bytes (64 KiB) are accepted`);
  const wide = `{"name":"${'é'.repeat(WAN_CONFIG_JSON_BYTES_MAX / 2)}"}`; // 2 bytes per character
  assert.match(refusal(wide, true), /^the WAN configuration JSON is 65547 bytes; at most 65536 bytes/);
  assert.match(refusal(' '.repeat(50 * 1024 * 1024), true), /is 52428800 bytes/, 'a huge text is refused without parsing');
  assert.deepEqual(parseWanConfigJson(pad(WAN_CONFIG_JSON_BYTES_MAX + 10), { bytesMax: 1 << 20 }), { name: 'w', publishers: [] }, 'the limit can be raised between members');
  // Nesting: counted outside strings only.
  const nested = (levels: number): string => `{"name":"w","consumer":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`;
  assert.deepEqual(parseWanConfigJson(nested(WAN_CONFIG_JSON_DEPTH_MAX)).name, 'w');
  assert.equal(refusal(nested(WAN_CONFIG_JSON_DEPTH_MAX + 1), true), `the WAN configuration JSON nests deeper than ${WAN_CONFIG_JSON_DEPTH_MAX} levels`);
  assert.equal(parseWanConfigJson(`{"name":"${'[{'.repeat(100)}\\"["}`).name, `${'[{'.repeat(100)}"[`, 'brackets and escaped quotes inside strings do not count');
  assert.match(refusal('['.repeat(30000), true), /nests deeper than 16 levels/);
});

// ---------------------------------------------------------------- writing

const FULL: WanReplicationConfig = {
  name: 'to-b',
  publishers: [
    { ...DEFAULTS, clusterName: 'b', publisherId: 'b', targetEndpoints: ['h:1'] },
    {
      clusterName: 'b',
      publisherId: 'b-dr',
      targetEndpoints: ['[::1]:5801', 'dr.example.com:5802'],
      batchSize: 1,
      batchMaxDelayMs: 0,
      responseTimeoutMs: 1,
      queueCapacity: 2147483647,
      queueFullBehavior: 'THROW_EXCEPTION',
      acknowledgeType: 'ACK_ON_RECEIPT',
      initialPublisherState: 'STOPPED',
      consistencyCheckStrategy: 'MERKLE_TREES',
    },
  ],
};

test('wanConfigToJson: the reference field names, enums by name; parses back to the same scheme', () => {
  assert.deepEqual(JSON.parse(wanConfigToJson(FULL)).batchPublishers[1], {
    clusterName: 'b',
    publisherId: 'b-dr',
    targetEndpoints: '[::1]:5801,dr.example.com:5802',
    batchSize: 1,
    batchMaxDelayMillis: 0,
    responseTimeoutMillis: 1,
    queueCapacity: 2147483647,
    queueFullBehavior: 'THROW_EXCEPTION',
    acknowledgeType: 'ACK_ON_RECEIPT',
    initialPublisherState: 'STOPPED',
    sync: { consistencyCheckStrategy: 'MERKLE_TREES' },
  });
  assert.deepEqual(parseWanConfigJson(wanConfigToJson(FULL)), FULL);
  assert.deepEqual(parseWanConfigJson(wanConfigToJson({ name: 'empty', publishers: [] })), { name: 'empty', publishers: [] });
  // A scheme read from the XML file survives the JSON too.
  const r = loadConfig({
    argv: [],
    env: {},
    cwd: '/w',
    readFile: () =>
      '<grid><wan-replication name="x"><batch-publisher><cluster-name>c</cluster-name><target-endpoints>c1:1 c2:2</target-endpoints>' +
      '<queue-full-behavior>THROW_EXCEPTION</queue-full-behavior><sync><consistency-check-strategy>MERKLE_TREES</consistency-check-strategy></sync></batch-publisher></wan-replication></grid>',
    fileExists: () => true,
    randomHex: () => 'ab',
    version: '9',
  });
  assert.equal(r.kind, 'run');
  const fromXml = r.kind === 'run' ? r.config.wanReplications[0] : undefined;
  assert.ok(fromXml !== undefined);
  assert.deepEqual(parseWanConfigJson(wanConfigToJson(fromXml)), fromXml);
});

// ---------------------------------------------------------------- merging

test('merge: a new scheme is added whole; new ids appended; existing ids ignored, never modified; idempotent', () => {
  const a = parse({ name: 'a', batchPublishers: [minimal({ publisherId: 'p1' })] });
  const first = mergeWanConfig([], a);
  assert.deepEqual(first, { schemes: [a], addedPublisherIds: ['p1'], ignoredPublisherIds: [] });
  // The same call again: nothing added, everything ignored, nothing changed.
  const again = mergeWanConfig(first.schemes, a);
  assert.deepEqual(again, { schemes: first.schemes, addedPublisherIds: [], ignoredPublisherIds: ['p1'] });
  assert.equal(again.schemes[0], first.schemes[0], 'an unchanged scheme is the same object');
  // p1 with other values is ignored (not modified); p2 is appended after it.
  const changed = parse({ name: 'a', batchPublishers: [minimal({ publisherId: 'p1', batchSize: 7 }), minimal({ publisherId: 'p2', targetEndpoints: 'h:2' })] });
  const second = mergeWanConfig(again.schemes, changed);
  assert.deepEqual(second.addedPublisherIds, ['p2']);
  assert.deepEqual(second.ignoredPublisherIds, ['p1']);
  assert.deepEqual(second.schemes[0]?.publishers.map((p) => [p.publisherId, p.batchSize, p.targetEndpoints]), [
    ['p1', 500, ['h:1']],
    ['p2', 500, ['h:2']],
  ]);
  assert.deepEqual(mergeWanConfig(second.schemes, changed).schemes, second.schemes, 'idempotent after the append too');
  // Another scheme leaves the first alone; the inputs are never modified.
  const b = parse({ name: 'b' });
  const frozen = Object.freeze([...second.schemes]);
  const third = mergeWanConfig(frozen, b);
  assert.deepEqual(third.schemes.map((s) => s.name), ['a', 'b']);
  assert.equal(third.schemes[0], second.schemes[0]);
  assert.deepEqual(third.addedPublisherIds, []);
  // An empty scheme receives publishers later (the reference allows a scheme to start empty).
  const fourth = mergeWanConfig(third.schemes, parse({ name: 'b', batchPublishers: [minimal()] }));
  assert.deepEqual(fourth.addedPublisherIds, ['b']);
  assert.equal(fourth.schemes[1]?.publishers.length, 1);
  // Names and ids compare exactly.
  assert.deepEqual(mergeWanConfig(fourth.schemes, parse({ name: 'A' })).schemes.map((s) => s.name), ['a', 'b', 'A']);
});

test('merge: refused, with nothing merged, past 64 publishers in a scheme or 256 schemes', () => {
  const ids = (from: number, n: number): Record<string, unknown>[] => Array.from({ length: n }, (_, i) => minimal({ publisherId: `p${from + i}` }));
  const full = mergeWanConfig([], parse({ name: 'a', batchPublishers: ids(0, WAN_PUBLISHERS_PER_SCHEME_MAX - 1) })).schemes;
  assert.equal(mergeWanConfig(full, parse({ name: 'a', batchPublishers: ids(WAN_PUBLISHERS_PER_SCHEME_MAX - 1, 1) })).schemes[0]?.publishers.length, WAN_PUBLISHERS_PER_SCHEME_MAX);
  assert.throws(
    () => mergeWanConfig(full, parse({ name: 'a', batchPublishers: ids(WAN_PUBLISHERS_PER_SCHEME_MAX - 1, 2) })),
    (e: unknown) => e instanceof GridError && e.code === 'ERR_WAN_CONFIG_INVALID' && e.message === `batchPublishers: cannot add 2 publishers to scheme "a": it has ${WAN_PUBLISHERS_PER_SCHEME_MAX - 1}, and at most ${WAN_PUBLISHERS_PER_SCHEME_MAX} are allowed`,
  );
  // Ignored ids do not count.
  assert.deepEqual(mergeWanConfig(full, parse({ name: 'a', batchPublishers: ids(0, 10) })).ignoredPublisherIds.length, 10);
  const schemes = Array.from({ length: WAN_SCHEMES_MAX }, (_, i): WanReplicationConfig => ({ name: `s${i}`, publishers: [] }));
  assert.throws(() => mergeWanConfig(schemes, { name: 'one-more', publishers: [] }), /^GridError: name: cannot add scheme "one-more": at most 256 WAN replication schemes are allowed$/);
  assert.equal(mergeWanConfig(schemes, { name: 's0', publishers: [] }).schemes.length, WAN_SCHEMES_MAX, 'an existing scheme can still be merged');
});

test('merge: duplicate ids inside the added scheme count once', () => {
  const p = { ...DEFAULTS, clusterName: 'b', publisherId: 'p', targetEndpoints: ['h:1'] };
  const r = mergeWanConfig([], { name: 'a', publishers: [p, { ...p, batchSize: 9 }] });
  assert.deepEqual(r.addedPublisherIds, ['p']);
  assert.deepEqual(r.ignoredPublisherIds, ['p']);
  assert.equal(r.schemes[0]?.publishers[0]?.batchSize, 500);
});
