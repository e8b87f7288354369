// Checks the WAN part of the configuration through the loader's pure entry point (loadConfig, with an
// in-memory file and environment): every <wan-replication> / <batch-publisher> element and its
// limits, with file:line:column in each message; GRID_WANREPLICATION_* and
// GRID_MAP_*_WANREPLICATIONREF_* variables (matching names ignoring case and dashes, creating what the
// file lacks, refusing what stays incomplete, hints for typos); the rules validation applies after
// every source (endpoints present, counts, refs naming a scheme); the INFO notice for a MERKLE_TREES
// publisher on a map without eager Merkle trees; and that --print-config of a configuration using
// every WAN element loads back into the same Config.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig, type LoadResult } from '../../src/config/load.js';
import type { Config } from '../../src/config/types.js';
import { WAN_PUBLISHERS_PER_SCHEME_MAX, WAN_TARGET_ENDPOINTS_MAX } from '../../src/config/wan-values.js';

type Env = Record<string, string | undefined>;

interface Setup {
  files?: Record<string, string>;
  argv?: string[];
  env?: Env;
}

function load(s: Setup = {}): LoadResult {
  const files = s.files ?? {};
  return loadConfig({
    argv: s.argv ?? [],
    env: s.env ?? {},
    cwd: '/w',
    readFile: (p) => {
      const t = files[p];
      if (t === undefined) throw new Error(`ENOENT: no such file, open '${p}'`);
      return t;
    },
    fileExists: (p) => p in files,
    randomHex: (n) => 'ab'.repeat(n),
    version: '9.9.9',
  });
}

function ok(s: Setup = {}): { config: Config; warnings: string[]; notices: string[] } {
  const r = load(s);
  if (r.kind !== 'run') assert.fail(`expected a config, got exit ${r.code}: ${r.stderr}${r.stdout.slice(0, 200)}`);
  return r;
}

/** The stderr line of a failed load without the `grid: config error: ` prefix; checks the one-line format. */
function fail(s: Setup = {}): string {
  const r = load(s);
  if (r.kind !== 'exit') assert.fail('expected a config error, got a config');
  assert.equal(r.code, 2);
  assert.match(r.stderr, /^grid: config error: [^\n]+\n$/);
  return r.stderr.slice('grid: config error: '.length, -1);
}

/** /w/grid.xml holding `<grid>` + body; body lines start at line 2. */
const xml = (body: string, extra: Setup = {}): Setup => ({ ...extra, files: { '/w/grid.xml': `<grid>\n${body}\n</grid>\n` } });
const okXml = (body: string, extra: Setup = {}): Config => ok(xml(body, extra)).config;
const failXml = (body: string, extra: Setup = {}): string => fail(xml(body, extra));
const pub = (inner: string, name = 'w'): string => `<wan-replication name="${name}"><batch-publisher>${inner}</batch-publisher></wan-replication>`;
const H1 = '<target-endpoints>h:1</target-endpoints>';

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

/** Two schemes, publishers with non-default values in every element, maps with refs. */
const FULL_WAN = `<map name="orders">
  <merkle-tree enabled="true"><depth>12</depth></merkle-tree>
  <wan-replication-ref name="to-b">
    <merge-policy-class-name>com.hazelcast.spi.merge.LatestUpdateMergePolicy</merge-policy-class-name>
    <republishing-enabled>false</republishing-enabled>
  </wan-replication-ref>
</map>
<map name="cache-*"><wan-replication-ref name="to-c"><merge-policy-class-name>PutIfAbsentMergePolicy</merge-policy-class-name></wan-replication-ref></map>
<map name="plain"><wan-replication-ref name="to-c"/></map>
<wan-replication name="to-b">
  <batch-publisher>
    <cluster-name>b</cluster-name>
    <publisher-id>b-main</publisher-id>
    <target-endpoints>127.0.0.1:5801, 127.0.0.1:5802;[::1]:5803</target-endpoints>
    <batch-size>100</batch-size>
    <batch-max-delay-millis>0</batch-max-delay-millis>
    <response-timeout-millis>500</response-timeout-millis>
    <queue-capacity>50</queue-capacity>
    <queue-full-behavior>THROW_EXCEPTION</queue-full-behavior>
    <acknowledge-type>ACK_ON_RECEIPT</acknowledge-type>
    <initial-publisher-state>PAUSED</initial-publisher-state>
    <sync><consistency-check-strategy>MERKLE_TREES</consistency-check-strategy></sync>
  </batch-publisher>
  <batch-publisher>
    <cluster-name>b</cluster-name>
    <publisher-id>b-second</publisher-id>
    <target-endpoints>b2.example.com:5701</target-endpoints>
    <queue-full-behavior>THROW_EXCEPTION_ONLY_IF_REPLICATION_ACTIVE</queue-full-behavior>
    <initial-publisher-state>STOPPED</initial-publisher-state>
  </batch-publisher>
</wan-replication>
<wan-replication name="to-c">
  <batch-publisher>
    <cluster-name>c</cluster-name>
    <target-endpoints>c1:6000</target-endpoints>
    <batch-size>100000</batch-size>
    <batch-max-delay-millis>2147483647</batch-max-delay-millis>
    <response-timeout-millis>1</response-timeout-millis>
    <queue-capacity>1</queue-capacity>
  </batch-publisher>
</wan-replication>
<wan-replication name="empty"/>`;

// ---------------------------------------------------------------- XML

test('xml: every WAN element is read, defaults fill the rest, publisher id defaults to the cluster name', () => {
  const c = okXml(FULL_WAN);
  assert.deepEqual(c.wanReplications.map((w) => w.name), ['to-b', 'to-c', 'empty']);
  assert.deepEqual(c.wanReplications[0]?.publishers, [
    {
      clusterName: 'b',
      publisherId: 'b-main',
      targetEndpoints: ['127.0.0.1:5801', '127.0.0.1:5802', '[::1]:5803'],
      batchSize: 100,
      batchMaxDelayMs: 0,
      responseTimeoutMs: 500,
      queueCapacity: 50,
      queueFullBehavior: 'THROW_EXCEPTION',
      acknowledgeType: 'ACK_ON_RECEIPT',
      initialPublisherState: 'PAUSED',
      consistencyCheckStrategy: 'MERKLE_TREES',
    },
    {
      ...DEFAULTS,
      clusterName: 'b',
      publisherId: 'b-second',
      targetEndpoints: ['b2.example.com:5701'],
      queueFullBehavior: 'THROW_EXCEPTION_ONLY_IF_REPLICATION_ACTIVE',
      initialPublisherState: 'STOPPED',
    },
  ]);
  assert.deepEqual(c.wanReplications[1]?.publishers[0], {
    ...DEFAULTS,
    clusterName: 'c',
    publisherId: 'c',
    targetEndpoints: ['c1:6000'],
    batchSize: 100000,
    batchMaxDelayMs: 2147483647,
    responseTimeoutMs: 1,
    queueCapacity: 1,
  });
  assert.deepEqual(c.wanReplications[2]?.publishers, [], 'a scheme may start empty (the reference allows it)');
  assert.deepEqual(c.maps.find((m) => m.name === 'orders')?.wanReplicationRef, { name: 'to-b', mergePolicy: 'LatestUpdateMergePolicy', republishingEnabled: false });
  assert.deepEqual(c.maps.find((m) => m.name === 'cache-*')?.wanReplicationRef, { name: 'to-c', mergePolicy: 'PutIfAbsentMergePolicy', republishingEnabled: true });
  assert.deepEqual(c.maps.find((m) => m.name === 'plain')?.wanReplicationRef, { name: 'to-c', mergePolicy: 'PassThroughMergePolicy', republishingEnabled: true });
  const noCluster = okXml(pub(H1)).wanReplications[0]?.publishers[0];
  assert.equal(noCluster?.clusterName, 'dev', 'the reference default');
  assert.equal(noCluster?.publisherId, 'dev');
});

test('xml: numeric limits of a publisher, each with file:line:column and the element', () => {
  const at = (inner: string): string => failXml(`<wan-replication name="w">\n<batch-publisher>${H1}\n${inner}</batch-publisher></wan-replication>`);
  assert.equal(at('<batch-size>0</batch-size>'), '/w/grid.xml:4:1: <batch-publisher> element <batch-size>: expected an integer 1..100000, got "0"');
  assert.match(at('<batch-size>100001</batch-size>'), /<batch-size>: expected an integer 1\.\.100000, got "100001"/);
  assert.equal(at('<queue-capacity>0</queue-capacity>'), '/w/grid.xml:4:1: <batch-publisher> element <queue-capacity>: expected an integer >= 1, got "0"');
  assert.match(at('<queue-capacity>2147483648</queue-capacity>'), /<queue-capacity>: expected an integer >= 1, got "2147483648"/);
  assert.match(at('<response-timeout-millis>0</response-timeout-millis>'), /<response-timeout-millis>: expected an integer >= 1, got "0"/);
  assert.match(at('<batch-max-delay-millis>-1</batch-max-delay-millis>'), /<batch-max-delay-millis>: expected an integer >= 0, got "-1"/);
  assert.match(at('<batch-size>1.5</batch-size>'), /expected an integer 1\.\.100000, got "1\.5"/);
  assert.match(at('<queue-full-behavior>DISCARD</queue-full-behavior>'), /<queue-full-behavior>: expected one of DISCARD_AFTER_MUTATION, THROW_EXCEPTION, THROW_EXCEPTION_ONLY_IF_REPLICATION_ACTIVE/);
  assert.match(at('<initial-publisher-state>PAUSE</initial-publisher-state>'), /expected one of REPLICATING, PAUSED, STOPPED \(did you mean PAUSED\?\), got "PAUSE"/);
  assert.match(at('<sync><consistency-check-strategy>MERKLE</consistency-check-strategy></sync>'), /<sync> element <consistency-check-strategy>: expected one of NONE, MERKLE_TREES/);
  assert.match(at('<cluster-name> </cluster-name>'), /<cluster-name>: expected a non-empty name/);
  assert.match(at('<publisher-id></publisher-id>'), /<publisher-id>: expected a non-empty name/);
  assert.match(at('<snapshot-enabled>true</snapshot-enabled>'), /<batch-publisher>: unknown element <snapshot-enabled>/);
  assert.match(at('<batch-sise>5</batch-sise>'), /unknown element <batch-sise> \(did you mean <batch-size>\?\)/);
  assert.match(at('<sync><consistency-check-strategy>NONE</consistency-check-strategy><x/></sync>'), /<sync>: unknown element <x>/);
  assert.match(at('<batch-size>1</batch-size><batch-size>2</batch-size>'), /element <batch-size> is given twice/);
  // Enums read in any letter case, like every enum of the file.
  assert.equal(okXml(pub(`${H1}<acknowledge-type>ack_on_receipt</acknowledge-type>`)).wanReplications[0]?.publishers[0]?.acknowledgeType, 'ACK_ON_RECEIPT');
});

test('xml: target endpoints are host:port with a port 1..65535, distinct, at least one, bounded', () => {
  const endpoints = (list: string): string => failXml(pub(`<target-endpoints>${list}</target-endpoints>`));
  assert.match(failXml(pub('<cluster-name>b</cluster-name>')), /<batch-publisher> needs <target-endpoints> with at least one host:port/);
  assert.match(endpoints(' , '), /<batch-publisher> needs <target-endpoints> with at least one host:port/);
  assert.equal(endpoints('h'), '/w/grid.xml:2:44: <batch-publisher> element <target-endpoints>: expected host:port with a port 1..65535, got "h"');
  assert.match(endpoints('h:0'), /expected host:port with a port 1\.\.65535, got "h:0"/);
  assert.match(endpoints('h:65536'), /got "h:65536"/);
  assert.match(endpoints('h:+80'), /got "h:\+80"/);
  assert.match(endpoints('h:1-3'), /got "h:1-3"/);
  assert.match(endpoints('::1'), /got "::1"/, 'a bare IPv6 address has no port');
  assert.match(endpoints('a b:1'), /expected host:port with a port 1\.\.65535 for every item \("a" is not\), got "a b:1"/);
  assert.match(endpoints('h:1,H:1'), /expected distinct endpoints \("H:1" repeats "h:1"\), got "h:1,H:1"/);
  assert.match(endpoints('h:01, h:1'), /distinct endpoints \("h:1" repeats "h:01"\)/, 'leading zeros are the same port');
  const many = Array.from({ length: WAN_TARGET_ENDPOINTS_MAX + 1 }, (_, i) => `h${i}:1`).join(',');
  assert.match(endpoints(many), new RegExp(`expected at most ${WAN_TARGET_ENDPOINTS_MAX} endpoints \\(${WAN_TARGET_ENDPOINTS_MAX + 1} given\\)`));
  const max = Array.from({ length: WAN_TARGET_ENDPOINTS_MAX }, (_, i) => `h${i}:1`).join(' ');
  assert.equal(okXml(pub(`<target-endpoints>${max}</target-endpoints>`)).wanReplications[0]?.publishers[0]?.targetEndpoints.length, WAN_TARGET_ENDPOINTS_MAX);
  assert.deepEqual(okXml(pub('<target-endpoints>h:05701</target-endpoints>')).wanReplications[0]?.publishers[0]?.targetEndpoints, ['h:5701'], 'the port is stored canonical');
});

test('xml: publisher ids are unique in a scheme, schemes are unique, counts are bounded', () => {
  assert.match(failXml(`<wan-replication name="w"><batch-publisher>${H1}</batch-publisher><batch-publisher><target-endpoints>h:2</target-endpoints></batch-publisher></wan-replication>`), /publisher id dev is used twice in <wan-replication name="w">/);
  // The same id in two schemes is fine: a publisher is addressed by scheme and id.
  assert.equal(okXml(`${pub(H1, 'a')}${pub(H1, 'b')}`).wanReplications.length, 2);
  assert.match(failXml('<wan-replication name="w"/>\n<wan-replication name="w"/>'), /^\/w\/grid\.xml:3:1: <wan-replication>: name w is given twice \(first at 2:1\)$/);
  assert.match(failXml('<wan-replication/>'), /<wan-replication> needs attribute name/);
  const publishers = (n: number): string =>
    `<wan-replication name="w">${Array.from({ length: n }, (_, i) => `<batch-publisher><publisher-id>p${i}</publisher-id>${H1}</batch-publisher>`).join('')}</wan-replication>`;
  assert.equal(okXml(publishers(WAN_PUBLISHERS_PER_SCHEME_MAX)).wanReplications[0]?.publishers.length, WAN_PUBLISHERS_PER_SCHEME_MAX);
  assert.match(failXml(publishers(WAN_PUBLISHERS_PER_SCHEME_MAX + 1)), new RegExp(`at most ${WAN_PUBLISHERS_PER_SCHEME_MAX} <batch-publisher>s are allowed in one scheme`));
});

test('rule: a wan-replication-ref names an existing scheme, exactly', () => {
  assert.equal(
    failXml('<map name="m">\n  <wan-replication-ref name="To-B"/>\n</map>\n<wan-replication name="to-b"/>'),
    '/w/grid.xml:3:3: <map name="m"> <wan-replication-ref name="To-B">: no <wan-replication> has this name (configured: to-b)',
  );
  assert.match(failXml('<map name="m"><wan-replication-ref/></map>'), /<wan-replication-ref> needs attribute name/);
  assert.match(failXml('<map name="m"><wan-replication-ref name="w"><republishing-enabled>yes</republishing-enabled></wan-replication-ref></map><wan-replication name="w"/>'), /<republishing-enabled>: expected true or false, got "yes"/);
  assert.match(failXml('<map name="m"><wan-replication-ref name="w"><filters/></wan-replication-ref></map><wan-replication name="w"/>'), /<wan-replication-ref>: unknown element <filters>/);
});

// ---------------------------------------------------------------- notices

test('notice (INFO, not a warning): a MERKLE_TREES publisher on a map whose merkle-tree is off', () => {
  const scheme = (strategy: string): string => pub(`<publisher-id>p1</publisher-id>${H1}<sync><consistency-check-strategy>${strategy}</consistency-check-strategy></sync>`);
  const off = ok(xml(`<map name="orders"><merkle-tree enabled="false"><depth>8</depth></merkle-tree><wan-replication-ref name="w"/></map>${scheme('MERKLE_TREES')}`));
  assert.deepEqual(off.warnings, []);
  assert.equal(off.notices.length, 1);
  assert.match(off.notices[0] ?? '', /^map orders: publisher p1 of <wan-replication name="w"> checks consistency with Merkle trees, and <merkle-tree enabled="false">: the map's trees \(depth 8\) are built when a consistency check or delta sync first needs them/);
  assert.match(off.notices[0] ?? '', /set <merkle-tree enabled="true"> to keep them up to date on every write instead$/);
  // The default (no <merkle-tree>) is off too.
  assert.equal(ok(xml(`<map name="m"><wan-replication-ref name="w"/></map>${scheme('MERKLE_TREES')}`)).notices.length, 1);
  assert.deepEqual(ok(xml(`<map name="m"><merkle-tree enabled="true"/><wan-replication-ref name="w"/></map>${scheme('MERKLE_TREES')}`)).notices, []);
  assert.deepEqual(ok(xml(`<map name="m"><wan-replication-ref name="w"/></map>${scheme('NONE')}`)).notices, []);
  assert.deepEqual(ok(xml(scheme('MERKLE_TREES'))).notices, [], 'no map refers to the scheme');
  // An override counts: the environment turns the trees on.
  assert.deepEqual(ok(xml(`<map name="m"><wan-replication-ref name="w"/></map>${scheme('MERKLE_TREES')}`, { env: { GRID_MAP_M_MERKLETREE_ENABLED: 'true' } })).notices, []);
});

// ---------------------------------------------------------------- environment

const BASE = `<map name="orders"><wan-replication-ref name="to-b"/></map>
<wan-replication name="to-b">
  <batch-publisher><cluster-name>b</cluster-name><publisher-id>b-main</publisher-id><target-endpoints>h:1</target-endpoints></batch-publisher>
</wan-replication>`;

test('env: every batch-publisher field, addressed by scheme and publisher id ignoring case and dashes', () => {
  const P = 'GRID_WANREPLICATION_TOB_BATCHPUBLISHER_BMAIN_';
  const c = okXml(BASE, {
    env: {
      [`${P}CLUSTERNAME`]: 'b2',
      [`${P}TARGETENDPOINTS`]: '10.0.0.1:5701, 10.0.0.2:5701',
      [`${P}BATCHSIZE`]: '250',
      [`${P}BATCHMAXDELAYMILLIS`]: '0',
      [`${P}RESPONSETIMEOUTMILLIS`]: '1500',
      [`${P}QUEUECAPACITY`]: '77',
      [`${P}QUEUEFULLBEHAVIOR`]: 'throw_exception',
      [`${P}ACKNOWLEDGETYPE`]: 'ACK_ON_RECEIPT',
      [`${P}INITIALPUBLISHERSTATE`]: 'STOPPED',
      [`${P}SYNC_CONSISTENCYCHECKSTRATEGY`]: 'MERKLE_TREES',
    },
  });
  assert.deepEqual(c.wanReplications, [
    {
      name: 'to-b',
      publishers: [
        {
          clusterName: 'b2',
          publisherId: 'b-main',
          targetEndpoints: ['10.0.0.1:5701', '10.0.0.2:5701'],
          batchSize: 250,
          batchMaxDelayMs: 0,
          responseTimeoutMs: 1500,
          queueCapacity: 77,
          queueFullBehavior: 'THROW_EXCEPTION',
          acknowledgeType: 'ACK_ON_RECEIPT',
          initialPublisherState: 'STOPPED',
          consistencyCheckStrategy: 'MERKLE_TREES',
        },
      ],
    },
  ]);
  // The comparison ignores case and dashes on both sides, so a segment written like the name works too.
  assert.equal(okXml(BASE, { env: { 'GRID_WANREPLICATION_To-B_BATCHPUBLISHER_b-main_BATCHSIZE': '3' } }).wanReplications[0]?.publishers[0]?.batchSize, 3);
});

test('env: the map ref: name, merge policy (with or without the Java prefix), republishing', () => {
  const c = okXml(`${BASE}<wan-replication name="other"/>`, {
    env: {
      GRID_MAP_ORDERS_WANREPLICATIONREF_NAME: 'other',
      GRID_MAP_ORDERS_WANREPLICATIONREF_MERGEPOLICYCLASSNAME: 'com.hazelcast.spi.merge.HigherHitsMergePolicy',
      GRID_MAP_ORDERS_WANREPLICATIONREF_REPUBLISHINGENABLED: 'FALSE',
    },
  });
  assert.deepEqual(c.maps.find((m) => m.name === 'orders')?.wanReplicationRef, { name: 'other', mergePolicy: 'HigherHitsMergePolicy', republishingEnabled: false });
  // A map without a ref gets one; a new map (lower-cased name) too.
  const d = okXml(BASE, { env: { GRID_MAP_NEW_MAP_WANREPLICATIONREF_NAME: 'to-b', GRID_MAP_NEW_MAP_WANREPLICATIONREF_MERGEPOLICYCLASSNAME: 'LatestUpdateMergePolicy' } });
  assert.deepEqual(d.maps.find((m) => m.name === 'new_map')?.wanReplicationRef, { name: 'to-b', mergePolicy: 'LatestUpdateMergePolicy', republishingEnabled: true });
  // Values are checked like the file's.
  assert.equal(
    fail({ env: { GRID_MAP_ORDERS_WANREPLICATIONREF_MERGEPOLICYCLASSNAME: 'LatestUpdatePolicy' } }),
    'environment variable GRID_MAP_ORDERS_WANREPLICATIONREF_MERGEPOLICYCLASSNAME: expected one of PassThroughMergePolicy, PutIfAbsentMergePolicy, LatestUpdateMergePolicy, HigherHitsMergePolicy, LatestAccessMergePolicy, ExpirationTimeMergePolicy, DiscardMergePolicy (did you mean LatestUpdateMergePolicy?), got "LatestUpdatePolicy"',
  );
  assert.match(fail({ env: { GRID_MAP_ORDERS_WANREPLICATIONREF_REPUBLISHINGENABLED: 'yes' } }), /REPUBLISHINGENABLED: expected true or false, got "yes"/);
  assert.match(fail({ env: { GRID_MAP_ORDERS_WANREPLICATIONREF_NAME: ' ' } }), /WANREPLICATIONREF_NAME: expected a non-empty name/);
});

test('env: a ref must end up naming an existing scheme; the message names the variable', () => {
  assert.equal(
    fail(xml(BASE, { env: { GRID_MAP_ORDERS_WANREPLICATIONREF_NAME: 'to-x' } })),
    'environment variable GRID_MAP_ORDERS_WANREPLICATIONREF_NAME: <map name="orders"> <wan-replication-ref name="to-x">: no <wan-replication> has this name (configured: to-b)',
  );
  assert.equal(
    fail({ env: { GRID_MAP_ORDERS_WANREPLICATIONREF_REPUBLISHINGENABLED: 'false' } }),
    'environment variable GRID_MAP_ORDERS_WANREPLICATIONREF_REPUBLISHINGENABLED: <map name="orders"> <wan-replication-ref>: no scheme named; set GRID_MAP_ORDERS_WANREPLICATIONREF_NAME (or give the map a <wan-replication-ref name="..."> in the file)',
  );
  // Changing only the merge policy of the file's ref leaves the ref's origin at the file.
  assert.match(fail(xml('<map name="m">\n<wan-replication-ref name="nope"/></map>', { env: { GRID_MAP_M_WANREPLICATIONREF_MERGEPOLICYCLASSNAME: 'DiscardMergePolicy' } })), /^\/w\/grid\.xml:3:1: /);
});

test('env: a scheme or publisher the file lacks is created (lower-cased), as for maps; it needs its endpoints', () => {
  const c = ok({
    env: {
      GRID_WANREPLICATION_TO_C_BATCHPUBLISHER_C_MAIN_TARGETENDPOINTS: 'c1:5701',
      GRID_WANREPLICATION_TO_C_BATCHPUBLISHER_C_MAIN_CLUSTERNAME: 'c',
      GRID_MAP_ORDERS_WANREPLICATIONREF_NAME: 'to_c',
    },
  }).config;
  assert.deepEqual(c.wanReplications, [{ name: 'to_c', publishers: [{ ...DEFAULTS, clusterName: 'c', publisherId: 'c_main', targetEndpoints: ['c1:5701'] }] }]);
  assert.equal(c.maps.find((m) => m.name === 'orders')?.wanReplicationRef?.name, 'to_c');
  // A second publisher in a file's scheme.
  const d = okXml(BASE, { env: { GRID_WANREPLICATION_TOB_BATCHPUBLISHER_B_DR_TARGETENDPOINTS: 'dr:1' } });
  assert.deepEqual(d.wanReplications[0]?.publishers.map((p) => [p.publisherId, p.clusterName, p.targetEndpoints]), [
    ['b-main', 'b', ['h:1']],
    ['b_dr', 'dev', ['dr:1']],
  ]);
  // Created without endpoints: refused, naming the variable that created it and the one to set.
  assert.equal(
    fail({ env: { GRID_WANREPLICATION_TOB_BATCHPUBLISHER_B_BATCHSIZE: '10' } }),
    'environment variable GRID_WANREPLICATION_TOB_BATCHPUBLISHER_B_BATCHSIZE: <wan-replication name="tob"> publisher b has no target endpoints (set <target-endpoints>, or GRID_WANREPLICATION_TOB_BATCHPUBLISHER_B_TARGETENDPOINTS)',
  );
  // Changing the cluster name keeps the id: the id is how the publisher is addressed.
  const e = okXml(pub(`<cluster-name>b</cluster-name>${H1}`), { env: { GRID_WANREPLICATION_W_BATCHPUBLISHER_B_CLUSTERNAME: 'b2' } });
  assert.deepEqual(e.wanReplications[0]?.publishers.map((p) => [p.publisherId, p.clusterName]), [['b', 'b2']]);
});

test('env: bad values, ambiguous names and unknown fields are errors naming the variable', () => {
  const P = 'GRID_WANREPLICATION_TOB_BATCHPUBLISHER_BMAIN_';
  const bad = (field: string, value: string): string => fail(xml(BASE, { env: { [`${P}${field}`]: value } }));
  assert.equal(bad('BATCHSIZE', '0'), `environment variable ${P}BATCHSIZE: expected an integer 1..100000, got "0"`);
  assert.match(bad('QUEUECAPACITY', '0'), /QUEUECAPACITY: expected an integer >= 1, got "0"/);
  assert.match(bad('RESPONSETIMEOUTMILLIS', 'soon'), /RESPONSETIMEOUTMILLIS: expected an integer >= 1, got "soon"/);
  assert.match(bad('BATCHMAXDELAYMILLIS', '-1'), /BATCHMAXDELAYMILLIS: expected an integer >= 0/);
  assert.match(bad('TARGETENDPOINTS', 'h:1,h:1'), /TARGETENDPOINTS: expected distinct endpoints \("h:1" repeats "h:1"\), got "h:1,h:1"/);
  assert.match(bad('TARGETENDPOINTS', ''), /TARGETENDPOINTS: expected at least one host:port with a port 1\.\.65535, got ""/);
  assert.match(bad('TARGETENDPOINTS', 'h:99999'), /TARGETENDPOINTS: expected host:port with a port 1\.\.65535, got "h:99999"/);
  assert.match(bad('QUEUEFULLBEHAVIOR', 'DROP'), /expected one of DISCARD_AFTER_MUTATION, THROW_EXCEPTION, THROW_EXCEPTION_ONLY_IF_REPLICATION_ACTIVE/);
  assert.match(bad('ACKNOWLEDGETYPE', '1'), /expected one of ACK_ON_OPERATION_COMPLETE, ACK_ON_RECEIPT, got "1"/, 'integer codes are for the JSON only');
  assert.match(bad('INITIALPUBLISHERSTATE', 'RUNNING'), /expected one of REPLICATING, PAUSED, STOPPED/);
  assert.match(bad('SYNC_CONSISTENCYCHECKSTRATEGY', 'MERKLE'), /expected one of NONE, MERKLE_TREES/);
  assert.match(bad('CLUSTERNAME', ''), /CLUSTERNAME: expected a non-empty name/);
  // Unknown fields and shapes stay unknown variables, with a hint when one is close.
  assert.equal(bad('BATCHSIZ', '1'), `environment variable ${P}BATCHSIZ is unknown (did you mean ${P}BATCHSIZE?)`);
  assert.match(bad('PUBLISHERID', 'x'), /is unknown/, 'the id addresses the publisher; it is not a field');
  assert.match(bad('CONSISTENCYCHECKSTRATEGY', 'NONE'), /is unknown \(did you mean GRID_WANREPLICATION_TOB_BATCHPUBLISHER_BMAIN_SYNC_CONSISTENCYCHECKSTRATEGY\?\)/);
  assert.match(fail(xml(BASE, { env: { GRID_WANREPLICATION_TOB_BATCHSIZE: '1' } })), /GRID_WANREPLICATION_TOB_BATCHSIZE is unknown/);
  assert.match(fail(xml(BASE, { env: { GRID_WANREPLICATION_TOB_BATCHPUBLISHER_BATCHSIZE: '1' } })), /is unknown/, 'no publisher id');
  assert.match(fail(xml(BASE, { env: { GRID_WANREPLICATION_TOB_BATCHPUBLISHR_BMAIN_BATCHSIZE: '1' } })), /is unknown \(did you mean GRID_WANREPLICATION_TOB_BATCHPUBLISHER_BMAIN_BATCHSIZE\?\)/);
  assert.match(fail(xml(BASE, { env: { GRID_MAP_ORDERS_WANREPLICATIONREF_MERGEPOLICY: 'x' } })), /is unknown \(did you mean GRID_MAP_ORDERS_WANREPLICATIONREF_MERGEPOLICYCLASSNAME\?\)/);
  // A new name ending in the first part of a field is a misspelt field, not a new map or publisher.
  assert.match(fail(xml(BASE, { env: { GRID_MAP_ORDERS_EVICTION_BACKUPCOUNT: '1' } })), /GRID_MAP_ORDERS_EVICTION_BACKUPCOUNT is unknown/);
  assert.match(fail(xml(BASE, { env: { GRID_WANREPLICATION_TOB_BATCHPUBLISHER_BMAIN_SYNC_BATCHSIZE: '1' } })), /_BMAIN_SYNC_BATCHSIZE is unknown/);
  assert.equal(okXml('<map name="orders_eviction"/>', { env: { GRID_MAP_ORDERS_EVICTION_BACKUPCOUNT: '2' } }).maps[1]?.backupCount, 2, 'unless that map exists');
  // Two schemes that differ only by case or dashes cannot be told apart from the environment.
  assert.equal(
    fail(xml('<wan-replication name="to-b"/><wan-replication name="tob"/>', { env: { GRID_WANREPLICATION_TOB_BATCHPUBLISHER_X_BATCHSIZE: '1' } })),
    'environment variable GRID_WANREPLICATION_TOB_BATCHPUBLISHER_X_BATCHSIZE: TOB matches both to-b and tob; rename one of them',
  );
});

test('env: WAN settings are still refused by a member that does not run WAN replication, naming the variable', () => {
  const r = loadConfig({
    argv: [],
    env: { GRID_WANREPLICATION_TOB_BATCHPUBLISHER_B_TARGETENDPOINTS: 'h:1' },
    cwd: '/w',
    readFile: () => {
      throw new Error('none');
    },
    fileExists: () => false,
    randomHex: () => 'ab',
    version: '9',
    supports: { persistence: true, wanReplication: false, cpSubsystem: true, tls: true },
  });
  assert.equal(r.kind, 'exit');
  if (r.kind === 'exit') {
    assert.equal(r.stderr, 'grid: config error: environment variable GRID_WANREPLICATION_TOB_BATCHPUBLISHER_B_TARGETENDPOINTS: <wan-replication name="tob">: WAN replication is not supported by this version of the member\n');
  }
});

// ---------------------------------------------------------------- print-config

function printed(s: Setup): string {
  const r = load({ ...s, argv: [...(s.argv ?? []), '--print-config'] });
  if (r.kind !== 'exit' || r.code !== 0) assert.fail(`print-config failed: ${JSON.stringify(r).slice(0, 300)}`);
  return r.stdout;
}

test('print-config: every WAN element, from the file and the environment, loads back into the same Config', () => {
  const setup = xml(FULL_WAN, {
    env: {
      GRID_WANREPLICATION_TOC_BATCHPUBLISHER_C_ACKNOWLEDGETYPE: 'ACK_ON_RECEIPT',
      GRID_WANREPLICATION_EMPTY_BATCHPUBLISHER_E1_TARGETENDPOINTS: 'e:1,[fe80::1]:2',
      GRID_WANREPLICATION_EMPTY_BATCHPUBLISHER_E1_CLUSTERNAME: 'e',
      GRID_MAP_PLAIN_WANREPLICATIONREF_REPUBLISHINGENABLED: 'false',
      GRID_MAP_PLAIN_WANREPLICATIONREF_MERGEPOLICYCLASSNAME: 'ExpirationTimeMergePolicy',
    },
  });
  const original = ok(setup).config;
  assert.equal(original.wanReplications[2]?.publishers[0]?.publisherId, 'e1');
  const text = printed(setup);
  assert.match(text, /<publisher-id>b-main<\/publisher-id>/);
  assert.match(text, /<target-endpoints>127\.0\.0\.1:5801,127\.0\.0\.1:5802,\[::1\]:5803<\/target-endpoints>/);
  const again = ok({ files: { '/p/printed.xml': text }, argv: ['--config', '/p/printed.xml'] }).config;
  assert.deepEqual({ ...again, source: null }, { ...original, source: null });
  assert.deepEqual(again.wanReplications, original.wanReplications);
});
