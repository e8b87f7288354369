// Checks src/config/load.ts end to end through its pure entry point, loadConfig, with an in-memory
// file system, environment and argv: built-in defaults; finding the file; every XML element and the
// errors for unknown, duplicated and mistyped values (with file:line:column and "did you mean"
// hints); placeholders; properties; every validation rule of docs/config.md (with the machine's
// addresses passed in for `<interfaces>`: patterns that match none are refused at the element);
// GRID_* variables; flags;
// precedence defaults < XML < env < flags; --help/--version/--print-config (with a round trip of the
// printed XML back through the loader); the one-line stderr format and exit status 2; deep freezing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig, type LoadResult } from '../../src/config/load.js';
import { FLAG_SPECS } from '../../src/config/flags.js';
import { GRID_PROPERTY_SPECS } from '../../src/config/properties.js';
import type { Config } from '../../src/config/types.js';
import type { LocalInterface } from '../../src/config/bind-address.js';

type Env = Record<string, string | undefined>;

interface Setup {
  files?: Record<string, string>;
  argv?: string[];
  env?: Env;
  cwd?: string;
  readable?: string[];
  hex?: string;
  /** The machine's addresses; omitted: the loader skips the <interfaces> match check. */
  locals?: LocalInterface[];
}

function load(s: Setup = {}): LoadResult {
  const files = s.files ?? {};
  return loadConfig({
    argv: s.argv ?? [],
    env: s.env ?? {},
    cwd: s.cwd ?? '/w',
    readFile: (p) => {
      const t = files[p];
      if (t === undefined) throw new Error(`ENOENT: no such file, open '${p}'`);
      return t;
    },
    fileExists: (p) => p in files,
    randomHex: (n) => (s.hex ?? 'ab').repeat(n).slice(0, n * 2),
    version: '9.9.9',
    fileReadable: (p) => (s.readable ?? []).includes(p),
    ...(s.locals === undefined ? {} : { localInterfaces: s.locals }),
  });
}

function ok(s: Setup = {}): { config: Config; warnings: string[]; sourceNote: string } {
  const r = load(s);
  if (r.kind !== 'run') assert.fail(`expected a config, got exit ${r.code}: ${r.stderr}${r.stdout.slice(0, 200)}`);
  return r;
}

/** The stderr line of a failed load, without the `grid: config error: ` prefix; checks the format. */
function fail(s: Setup = {}): string {
  const r = load(s);
  if (r.kind !== 'exit') assert.fail('expected a config error, got a config');
  assert.equal(r.code, 2);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /^grid: config error: [^\n]+\n$/, 'one line on stderr');
  return r.stderr.slice('grid: config error: '.length, -1);
}

/** A file /w/grid.xml holding `<grid>` + body; line 1 is `<grid>`, so body lines start at 2. */
const xml = (body: string, extra: Setup = {}): Setup => ({ ...extra, files: { '/w/grid.xml': `<grid>\n${body}\n</grid>\n`, ...extra.files } });
const okXml = (body: string, extra: Setup = {}): Config => ok(xml(body, extra)).config;
const failXml = (body: string, extra: Setup = {}): string => fail(xml(body, extra));

// ---------------------------------------------------------------- defaults

test('defaults: no file, no env, no flags', () => {
  const { config: c, warnings, sourceNote } = ok();
  assert.equal(c.clusterName, 'dev');
  assert.equal(c.instanceName, 'grid-abababab');
  assert.deepEqual(c.network.port, { port: 5701, autoIncrement: true, portCount: 100 });
  assert.equal(c.network.publicAddress, null);
  assert.equal(c.network.restApi.enabled, false);
  assert.deepEqual(c.network.restApi.groups, { CLUSTER_READ: true, CLUSTER_WRITE: false, HEALTH_CHECK: true, PERSISTENCE: false, WAN: false, DATA: false, CP: false });
  assert.equal(c.network.restApi.console.enabled, true, 'the console is on by default (whenever REST is)');
  assert.deepEqual(c.network.join.tcpIp, { enabled: false, connectionTimeoutSeconds: 5, members: [] });
  assert.deepEqual(c.network.interfaces, { enabled: false, interfaces: [] });
  assert.equal(c.network.ssl.enabled, false);
  assert.deepEqual(c.advancedNetwork, { enabled: false, memberEndpoint: null, restEndpoint: null, wanEndpoints: [] });
  assert.deepEqual(c.maps.map((m) => m.name), ['default']);
  assert.deepEqual(c.queues.map((q) => q.name), ['default']);
  assert.deepEqual(c.maps[0], {
    name: 'default',
    backupCount: 1,
    asyncBackupCount: 0,
    timeToLiveSeconds: 0,
    maxIdleSeconds: 0,
    eviction: { policy: 'NONE', maxSizePolicy: 'PER_NODE', size: 2147483647 },
    merkleTree: { enabled: false, depth: 10 },
    dataPersistence: { enabled: false, fsync: false },
    mergePolicy: { policy: 'PutIfAbsentMergePolicy', batchSize: 100 },
    wanReplicationRef: null,
  });
  assert.deepEqual(c.queues[0], {
    name: 'default',
    maxSize: 0,
    backupCount: 1,
    asyncBackupCount: 0,
    emptyQueueTtlSeconds: -1,
    dataPersistence: { enabled: false, fsync: false },
    mergePolicy: { policy: 'PutIfAbsentMergePolicy', batchSize: 100 },
  });
  assert.equal(c.liteMember, false);
  assert.deepEqual(c.logging, { level: 'INFO', format: 'text' });
  assert.deepEqual({ cpMemberCount: c.cpSubsystem.cpMemberCount, groupSize: c.cpSubsystem.groupSize }, { cpMemberCount: 0, groupSize: 3 });
  assert.equal(c.persistence.enabled, false);
  assert.equal(c.persistence.baseDir, 'persistence');
  assert.equal(c.security.enabled, false);
  assert.deepEqual(c.wanReplications, []);
  assert.deepEqual(c.rawProperties, {});
  assert.equal(c.source, 'defaults');
  assert.deepEqual(warnings, []);
  assert.match(sourceNote, /^built-in defaults/);
});

test('defaults: every grid property has its documented default', () => {
  const p = ok().config.properties;
  assert.deepEqual(p, {
    partitionCount: 271,
    heartbeatIntervalSeconds: 1,
    maxNoHeartbeatSeconds: 10,
    connectionMonitorIntervalMs: 100,
    connectionMonitorMaxFaults: 3,
    operationCallTimeoutMs: 60000,
    cpCallTimeoutMs: 10000,
    cpInvocationDedupeSeconds: 300,
    cpLeadershipRebalanceSeconds: 60,
    gracefulShutdownMaxWaitSeconds: 600,
    restHeaderBytesMax: 16384,
    restBodyBytesMax: 16777216,
    restPipelineMax: 1000,
    restReadBufferShared: true,
    restHeadersTimeoutSeconds: 60,
    restIdleTimeoutSeconds: 300,
    restConnectionsMax: 10000,
    queuePollTimeoutSecondsMax: 300,
    queueWaitersMax: 100000,
    memberFrameBytesMax: 67108864,
    clientFrameBytesMax: 16778240,
    clientHeartbeatTimeoutSeconds: 60,
    clientConnectionsMax: 10000,
    shutdownInflightWaitSeconds: 20,
    sniffTimeoutMs: 10000,
    socketBindAny: true,
    httpHealthcheckEnabled: false,
  });
});

test('defaults: the generated instance name comes from the injected randomness only when none is given', () => {
  assert.equal(ok({ hex: '1f' }).config.instanceName, 'grid-1f1f1f1f');
  assert.notEqual(ok({ hex: '1f' }).config.instanceName, ok({ hex: '2e' }).config.instanceName);
  let calls = 0;
  const r = loadConfig({
    argv: ['--instance-name', 'mine'],
    env: {},
    cwd: '/w',
    readFile: () => {
      throw new Error('no');
    },
    fileExists: () => false,
    randomHex: () => {
      calls++;
      return 'x';
    },
    version: '1',
  });
  assert.equal(r.kind === 'run' && r.config.instanceName, 'mine');
  assert.equal(calls, 0);
});

test('the config is deep-frozen', () => {
  const c = okXml('<map name="m"><wan-replication-ref name="w"/></map><wan-replication name="w"><batch-publisher><target-endpoints>h:1</target-endpoints></batch-publisher></wan-replication>');
  const stack: unknown[] = [c];
  let count = 0;
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'object' && v !== null) {
      assert.ok(Object.isFrozen(v), 'every object is frozen');
      count++;
      stack.push(...Object.values(v));
    }
  }
  assert.ok(count > 20);
  assert.throws(() => {
    (c as { clusterName: string }).clusterName = 'x';
  }, TypeError);
  assert.throws(() => {
    (c.maps as unknown as unknown[]).push({});
  }, TypeError);
});

// ---------------------------------------------------------------- finding the file

test('file: --config (relative to cwd) beats GRID_CONFIG beats ./grid.xml', () => {
  const files = {
    '/w/a.xml': '<grid><cluster-name>a</cluster-name></grid>',
    '/etc/b.xml': '<grid><cluster-name>b</cluster-name></grid>',
    '/w/grid.xml': '<grid><cluster-name>local</cluster-name></grid>',
  };
  const env = { GRID_CONFIG: '/etc/b.xml' };
  const byFlag = ok({ files, env, argv: ['--config', 'a.xml'] });
  assert.equal(byFlag.config.clusterName, 'a');
  assert.equal(byFlag.config.source, '/w/a.xml');
  assert.match(byFlag.sourceNote, /^\/w\/a\.xml \(from flag --config\)/);
  const byEnv = ok({ files, env });
  assert.equal(byEnv.config.clusterName, 'b');
  assert.match(byEnv.sourceNote, /from environment variable GRID_CONFIG/);
  const local = ok({ files });
  assert.equal(local.config.clusterName, 'local');
  assert.match(local.sourceNote, /from working directory/);
});

test('file: a missing --config or GRID_CONFIG file is an error naming the flag or variable', () => {
  assert.match(fail({ argv: ['--config=/nope.xml'] }), /^flag --config: cannot read "\/nope\.xml": ENOENT/);
  assert.match(fail({ env: { GRID_CONFIG: 'x.xml' } }), /^environment variable GRID_CONFIG: cannot read "\/w\/x\.xml"/);
});

test('file: YAML is not supported: an error when asked for, a warning when only grid.yaml exists', () => {
  assert.match(fail({ argv: ['--config', 'grid.yaml'], files: { '/w/grid.yaml': 'a: 1' } }), /YAML configuration is not supported/);
  const r = ok({ files: { '/w/grid.yaml': 'a: 1' } });
  assert.equal(r.config.source, 'defaults');
  assert.match(r.warnings.join(), /grid\.yaml found but YAML configuration is not supported/);
});

test('sourceNote lists the environment variables and flags that overrode the file', () => {
  const r = ok(xml('', { env: { GRID_CLUSTERNAME: 'x' }, argv: ['--port', '6000', '--lite'] }));
  assert.equal(r.sourceNote, '/w/grid.xml (from working directory), overridden by environment GRID_CLUSTERNAME; flags --port --lite');
});

// ---------------------------------------------------------------- XML: every element

const FULL = `
  <cluster-name>prod</cluster-name>
  <instance-name>m1</instance-name>
  <properties>
    <property name="grid.partition.count">7</property>
    <property name="grid.heartbeat.interval.seconds">2</property>
    <property name="grid.max.no.heartbeat.seconds">6</property>
    <property name="grid.operation.call.timeout.millis">2001</property>
    <property name="grid.socket.bind.any">FALSE</property>
    <property name="app.region">eu</property>
  </properties>
  <lite-member enabled="TRUE"/>
  <logging level="fine" format="JSON"/>
  <network>
    <public-address>10.0.0.5</public-address>
    <port auto-increment="false" port-count="3">5801</port>
    <interfaces enabled="true"><interface>10.0.*.*</interface><interface> 10.3.10.4-18 </interface><interface>127.0.0.11</interface></interfaces>
    <join>
      <multicast enabled="false"/>
      <tcp-ip enabled="true" connection-timeout-seconds="9">
        <member-list><member>127.0.0.1</member><member>h1:5701, h2:5701-5703</member><member>[::1]:5701</member></member-list>
      </tcp-ip>
    </join>
    <rest-api enabled="true">
      <endpoint-group name="DATA" enabled="true"/>
      <endpoint-group name="HEALTH_CHECK" enabled="false"/>
      <endpoint-group name="HOT_RESTART"/>
      <console enabled="false"/>
    </rest-api>
    <ssl enabled="false" key-file="k.pem" cert-file="c.pem" ca-file="" client-auth="optional"/>
  </network>
  <advanced-network enabled="true">
    <member-server-socket-endpoint-config><port auto-increment="true">5701</port></member-server-socket-endpoint-config>
    <rest-server-socket-endpoint-config>
      <port auto-increment="false">8080</port>
      <endpoint-groups><endpoint-group name="WAN" enabled="true"/></endpoint-groups>
      <ssl enabled="false" key-file="" cert-file=""/>
    </rest-server-socket-endpoint-config>
    <wan-server-socket-endpoint-config name="wan"><port>11010</port></wan-server-socket-endpoint-config>
  </advanced-network>
  <map name="orders">
    <backup-count>2</backup-count>
    <async-backup-count>1</async-backup-count>
    <time-to-live-seconds>60</time-to-live-seconds>
    <max-idle-seconds>30</max-idle-seconds>
    <eviction eviction-policy="lru" max-size-policy="PER_NODE" size="1000"/>
    <merkle-tree enabled="true"><depth>12</depth></merkle-tree>
    <data-persistence enabled="true" fsync="true"/>
    <merge-policy batch-size="250">com.hazelcast.spi.merge.LatestUpdateMergePolicy</merge-policy>
    <wan-replication-ref name="to-b">
      <merge-policy-class-name>com.hazelcast.spi.merge.LatestUpdateMergePolicy</merge-policy-class-name>
      <republishing-enabled>false</republishing-enabled>
    </wan-replication-ref>
  </map>
  <map name="cache-*"><time-to-live-seconds>5</time-to-live-seconds></map>
  <queue name="jobs">
    <max-size>100</max-size>
    <backup-count>0</backup-count>
    <async-backup-count>2</async-backup-count>
    <empty-queue-ttl>30</empty-queue-ttl>
    <data-persistence enabled="true"/>
    <merge-policy batch-size="7">DiscardMergePolicy</merge-policy>
  </queue>
  <wan-replication name="to-b">
    <batch-publisher>
      <cluster-name>b</cluster-name>
      <target-endpoints>127.0.0.1:5801,127.0.0.1:5802</target-endpoints>
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
      <target-endpoints>h:1</target-endpoints>
    </batch-publisher>
  </wan-replication>
  <persistence enabled="true">
    <base-dir>/var/grid</base-dir>
    <backup-dir>/var/backup</backup-dir>
    <validation-timeout-seconds>60</validation-timeout-seconds>
    <data-load-timeout-seconds>100</data-load-timeout-seconds>
    <cluster-data-recovery-policy>PARTIAL_RECOVERY_MOST_RECENT</cluster-data-recovery-policy>
    <auto-remove-stale-data>false</auto-remove-stale-data>
  </persistence>
  <security enabled="true">
    <realms>
      <realm name="rest">
        <authentication><simple><user username="admin" password="s3cret"/><user username="ops" password=" sp ace " roles="read-only"/></simple></authentication>
        <identity><username-password username="member" password="pw"/></identity>
      </realm>
    </realms>
    <member-authentication realm="rest"/>
  </security>
  <cp-subsystem><cp-member-count>5</cp-member-count><group-size>5</group-size></cp-subsystem>`;

test('xml: a file using every element is read into the typed Config', () => {
  const { config: c, warnings } = ok(xml(FULL));
  assert.deepEqual(warnings, []);
  assert.equal(c.clusterName, 'prod');
  assert.equal(c.instanceName, 'm1');
  assert.equal(c.properties.partitionCount, 7);
  assert.equal(c.properties.heartbeatIntervalSeconds, 2);
  assert.equal(c.rawProperties['app.region'], 'eu');
  assert.equal(c.rawProperties['grid.partition.count'], undefined, 'grid.* properties are typed, not raw');
  assert.equal(c.liteMember, true);
  assert.deepEqual(c.logging, { level: 'FINE', format: 'json' });
  assert.equal(c.network.publicAddress, '10.0.0.5');
  assert.deepEqual(c.network.port, { port: 5801, autoIncrement: false, portCount: 3 });
  assert.deepEqual(c.network.interfaces, { enabled: true, interfaces: ['10.0.*.*', '10.3.10.4-18', '127.0.0.11'] });
  assert.equal(c.properties.socketBindAny, false);
  assert.deepEqual(c.network.join.tcpIp, { enabled: true, connectionTimeoutSeconds: 9, members: ['127.0.0.1', 'h1:5701', 'h2:5701-5703', '[::1]:5701'] });
  assert.equal(c.network.restApi.enabled, true);
  assert.deepEqual(c.network.restApi.groups, { CLUSTER_READ: true, CLUSTER_WRITE: false, HEALTH_CHECK: false, PERSISTENCE: true, WAN: false, DATA: true, CP: false });
  assert.equal(c.network.restApi.console.enabled, false);
  assert.deepEqual(c.network.ssl, { enabled: false, keyFile: 'k.pem', certFile: 'c.pem', caFile: '', clientAuth: 'optional' });
  assert.equal(c.advancedNetwork.enabled, true);
  assert.deepEqual(c.advancedNetwork.memberEndpoint, { port: { port: 5701, autoIncrement: true, portCount: 100 } });
  assert.deepEqual(c.advancedNetwork.restEndpoint?.port, { port: 8080, autoIncrement: false, portCount: 100 });
  assert.deepEqual(c.advancedNetwork.restEndpoint?.groups, { CLUSTER_READ: true, CLUSTER_WRITE: false, HEALTH_CHECK: true, PERSISTENCE: false, WAN: true, DATA: false, CP: false });
  assert.deepEqual(c.advancedNetwork.wanEndpoints, [{ name: 'wan', port: { port: 11010, autoIncrement: true, portCount: 100 } }]);
  assert.deepEqual(c.maps.map((m) => m.name), ['default', 'orders', 'cache-*']);
  assert.deepEqual(c.maps[1], {
    name: 'orders',
    backupCount: 2,
    asyncBackupCount: 1,
    timeToLiveSeconds: 60,
    maxIdleSeconds: 30,
    eviction: { policy: 'LRU', maxSizePolicy: 'PER_NODE', size: 1000 },
    merkleTree: { enabled: true, depth: 12 },
    dataPersistence: { enabled: true, fsync: true },
    mergePolicy: { policy: 'LatestUpdateMergePolicy', batchSize: 250 },
    wanReplicationRef: { name: 'to-b', mergePolicy: 'LatestUpdateMergePolicy', republishingEnabled: false },
  });
  assert.deepEqual(c.queues[1], {
    name: 'jobs',
    maxSize: 100,
    backupCount: 0,
    asyncBackupCount: 2,
    emptyQueueTtlSeconds: 30,
    dataPersistence: { enabled: true, fsync: false },
    mergePolicy: { policy: 'DiscardMergePolicy', batchSize: 7 },
  });
  assert.deepEqual(c.wanReplications[0]?.publishers[0], {
    clusterName: 'b',
    publisherId: 'b',
    targetEndpoints: ['127.0.0.1:5801', '127.0.0.1:5802'],
    batchSize: 100,
    batchMaxDelayMs: 0,
    responseTimeoutMs: 500,
    queueCapacity: 50,
    queueFullBehavior: 'THROW_EXCEPTION',
    acknowledgeType: 'ACK_ON_RECEIPT',
    initialPublisherState: 'PAUSED',
    consistencyCheckStrategy: 'MERKLE_TREES',
  });
  assert.deepEqual(c.wanReplications[0]?.publishers[1], {
    clusterName: 'b',
    publisherId: 'b-second',
    targetEndpoints: ['h:1'],
    batchSize: 500,
    batchMaxDelayMs: 1000,
    responseTimeoutMs: 60000,
    queueCapacity: 10000,
    queueFullBehavior: 'DISCARD_AFTER_MUTATION',
    acknowledgeType: 'ACK_ON_OPERATION_COMPLETE',
    initialPublisherState: 'REPLICATING',
    consistencyCheckStrategy: 'NONE',
  });
  assert.deepEqual(c.persistence, {
    enabled: true,
    baseDir: '/var/grid',
    backupDir: '/var/backup',
    validationTimeoutSeconds: 60,
    dataLoadTimeoutSeconds: 100,
    clusterDataRecoveryPolicy: 'PARTIAL_RECOVERY_MOST_RECENT',
    autoRemoveStaleData: false,
  });
  assert.deepEqual(c.security, {
    enabled: true,
    realms: [
      {
        name: 'rest',
        users: [
          { username: 'admin', password: 's3cret', role: 'admin' },
          { username: 'ops', password: ' sp ace ', role: 'read-only' },
        ],
        identity: { username: 'member', password: 'pw' },
      },
    ],
    memberAuthenticationRealm: 'rest',
  });
  assert.deepEqual({ cpMemberCount: c.cpSubsystem.cpMemberCount, groupSize: c.cpSubsystem.groupSize }, { cpMemberCount: 5, groupSize: 5 });
});

test('xml: the sample config/grid.xml loads with REST, DATA and tcp-ip on', async () => {
  const { readFileSync } = await import('node:fs');
  const text = readFileSync(new URL('../../config/grid.xml', import.meta.url), 'utf8');
  const c = ok({ files: { '/w/config/grid.xml': text }, argv: ['--config', 'config/grid.xml'] }).config;
  assert.equal(c.clusterName, 'dev');
  assert.deepEqual(c.network.port, { port: 5701, autoIncrement: true, portCount: 100 });
  assert.equal(c.network.publicAddress, '127.0.0.1');
  assert.equal(c.network.restApi.enabled, true);
  assert.deepEqual(c.network.restApi.groups, { CLUSTER_READ: true, CLUSTER_WRITE: false, HEALTH_CHECK: true, PERSISTENCE: false, WAN: false, DATA: true, CP: false });
  assert.deepEqual(c.network.join.tcpIp.members, ['127.0.0.1']);
  assert.equal(c.network.join.tcpIp.enabled, true);
  assert.deepEqual(c.maps.map((m) => m.name), ['default']);
  assert.deepEqual(c.queues.map((q) => q.name), ['default']);
});

test('xml: namespaces and schemaLocation on the root are ignored; the root must be <grid>', () => {
  assert.equal(ok({ files: { '/w/grid.xml': '<grid xmlns="urn:g" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="urn:g g.xsd"/>' } }).config.clusterName, 'dev');
  assert.equal(fail({ files: { '/w/grid.xml': '<hazelcast/>' } }), '/w/grid.xml:1:1: the root element must be <grid>, got <hazelcast> (rename the root element of a Hazelcast file to <grid>)');
});

test('xml: syntax errors carry file:line:column', () => {
  assert.equal(fail({ files: { '/w/grid.xml': '<grid>\n  <map name="a">\n</grid>' } }), '/w/grid.xml:3:1: mismatched tag: </grid> closes <map> opened at 2:3');
  assert.equal(fail({ files: { '/w/grid.xml': '<!DOCTYPE grid [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n<grid>&x;</grid>' } }), '/w/grid.xml:1:1: DOCTYPE and DTDs are not allowed');
});

test('xml: unknown elements and attributes are errors with a hint', () => {
  assert.equal(failXml('<map name="m">\n    <backup-cont>1</backup-cont>\n</map>'), '/w/grid.xml:3:5: <map>: unknown element <backup-cont> (did you mean <backup-count>?)');
  assert.equal(failXml('<network><port auto-increament="true">5701</port></network>'), '/w/grid.xml:2:16: <port>: unknown attribute auto-increament (did you mean auto-increment?)');
  assert.equal(failXml('<clustername>x</clustername>'), '/w/grid.xml:2:1: <grid>: unknown element <clustername> (did you mean <cluster-name>?)');
  assert.equal(failXml('<zzz/>'), '/w/grid.xml:2:1: <grid>: unknown element <zzz>');
  assert.equal(failXml('<cluster-name a="1">x</cluster-name>'), '/w/grid.xml:2:15: <cluster-name>: unknown attribute a (it takes no attributes)');
  assert.equal(failXml('<cluster-name><x/></cluster-name>'), '/w/grid.xml:2:15: <cluster-name>: unknown element <x> (it takes no child elements)');
});

test('xml: duplicated singletons are errors at the second one', () => {
  assert.equal(failXml('<cluster-name>a</cluster-name>\n<cluster-name>b</cluster-name>'), '/w/grid.xml:3:1: <grid>: element <cluster-name> is given twice (first at 2:1)');
  assert.match(failXml('<map name="m"><backup-count>1</backup-count><backup-count>2</backup-count></map>'), /<map>: element <backup-count> is given twice/);
  assert.match(failXml('<map name="m"/><map name="m"/>'), /^\/w\/grid.xml:2:16: <map>: name m is given twice \(first at 2:1\)$/);
  assert.match(failXml('<queue name="q"/><queue name="q"/>'), /<queue>: name q is given twice/);
  assert.match(failXml('<wan-replication name="w"/><wan-replication name="w"/>'), /<wan-replication>: name w is given twice/);
  assert.match(failXml('<properties><property name="a">1</property><property name="a">2</property></properties>'), /property a is given twice/);
});

test('xml: stray text where no text belongs is an error', () => {
  assert.equal(failXml('<network>oops</network>'), '/w/grid.xml:2:10: <network>: unexpected text "oops"');
});

test('xml: wrong types name file:line:column, the element and what was expected', () => {
  assert.equal(failXml('<map name="m">\n    <backup-count>x</backup-count>\n</map>'), '/w/grid.xml:3:5: <map> element <backup-count>: expected an integer 0..6, got "x"');
  assert.equal(failXml('<map name="m"><backup-count>7</backup-count></map>'), '/w/grid.xml:2:15: <map> element <backup-count>: expected an integer 0..6, got "7"');
  assert.equal(failXml('<map name="m"><backup-count>1.5</backup-count></map>'), '/w/grid.xml:2:15: <map> element <backup-count>: expected an integer 0..6, got "1.5"');
  assert.equal(failXml('<lite-member enabled="yes"/>'), '/w/grid.xml:2:14: <lite-member> attribute enabled: expected true or false, got "yes"');
  assert.equal(failXml('<network><port>70000</port></network>'), '/w/grid.xml:2:10: <network> element <port>: expected a port 1..65535, got "70000"');
  assert.equal(failXml('<network><port>0</port></network>'), '/w/grid.xml:2:10: <network> element <port>: expected a port 1..65535, got "0"');
  assert.match(failXml('<network><port port-count="0">5701</port></network>'), /<port> attribute port-count: expected an integer 1..65535, got "0"/);
  assert.match(failXml('<cluster-name>  </cluster-name>'), /<grid> element <cluster-name>: expected a non-empty name/);
  assert.match(failXml('<logging level="LOUD"/>'), /<logging> attribute level: expected one of OFF, SEVERE, WARNING, INFO, CONFIG, FINE, FINER, FINEST, got "LOUD"/);
  assert.match(failXml('<map name="m"><time-to-live-seconds>-1</time-to-live-seconds></map>'), /expected an integer >= 0, got "-1"/);
  assert.match(failXml('<queue name="q"><empty-queue-ttl>-2</empty-queue-ttl></queue>'), /<queue> element <empty-queue-ttl>: expected an integer >= -1, got "-2"/);
  assert.match(failXml('<network><public-address>a b</public-address></network>'), /expected a host name or IP address/);
});

test('xml: booleans accept true/false in any letter case', () => {
  assert.equal(okXml('<lite-member enabled="True"/>').liteMember, true);
  assert.equal(okXml('<lite-member enabled="FALSE"/>').liteMember, false);
  assert.equal(okXml('<network><rest-api enabled=" true "/></network>').network.restApi.enabled, true);
});

test('xml: a bad value is quoted on one line even with newlines in it', () => {
  assert.equal(failXml('<map name="m"><backup-count>1\n2</backup-count></map>'), '/w/grid.xml:2:15: <map> element <backup-count>: expected an integer 0..6, got "1\\n2"');
});

test('xml: join member list entries are checked', () => {
  assert.match(failXml('<network><join><tcp-ip><member-list><member>h:99999</member></member-list></tcp-ip></join></network>'), /<member-list> element <member>: expected host, host:port or host:port1-port2 with ports 1..65535 in rising order, got "h:99999"/);
  assert.match(failXml('<network><join><tcp-ip><member-list><member>h:5703-5701</member></member-list></tcp-ip></join></network>'), /rising order/);
  assert.match(failXml('<network><join><tcp-ip><member-list><member> </member></member-list></tcp-ip></join></network>'), /expected host/);
  assert.match(failXml('<network><join><multicast enabled="true"/></join></network>'), /multicast join is not supported/);
});

test('xml: REST endpoint groups: HOT_RESTART is PERSISTENCE, unknown names get a hint, a group twice is an error', () => {
  assert.equal(okXml('<network><rest-api><endpoint-group name="HOT_RESTART" enabled="true"/></rest-api></network>').network.restApi.groups.PERSISTENCE, true);
  assert.equal(okXml('<network><rest-api><endpoint-group name="data"/></rest-api></network>').network.restApi.groups.DATA, true);
  assert.match(failXml('<network><rest-api><endpoint-group name="DTA"/></rest-api></network>'), /<endpoint-group> attribute name: expected an endpoint group .*\(did you mean DATA\?\), got "DTA"/);
  assert.match(failXml('<network><rest-api><endpoint-group name="PERSISTENCE"/><endpoint-group name="HOT_RESTART"/></rest-api></network>'), /group PERSISTENCE is given twice/);
  assert.match(failXml('<network><rest-api><console enabled="maybe"/></rest-api></network>'), /console/);
  assert.match(failXml('<network><rest-api><endpoint-group enabled="true"/></rest-api></network>'), /<endpoint-group> needs attribute name/);
});

test('xml: advanced-network: a REST endpoint enables REST there; member endpoint required when enabled; ignored when disabled', () => {
  const c = okXml('<advanced-network enabled="true"><member-server-socket-endpoint-config/><rest-server-socket-endpoint-config/></advanced-network>');
  assert.deepEqual(c.advancedNetwork.restEndpoint?.port, { port: 8080, autoIncrement: true, portCount: 100 });
  assert.equal(c.advancedNetwork.restEndpoint?.groups.CLUSTER_READ, true);
  assert.equal(c.advancedNetwork.restEndpoint?.ssl.enabled, false);
  assert.equal(
    failXml('<advanced-network enabled="true">\n<rest-server-socket-endpoint-config/></advanced-network>'),
    '/w/grid.xml:2:1: <advanced-network enabled="true"> needs <member-server-socket-endpoint-config>',
  );
  const r = ok(xml('<advanced-network><rest-server-socket-endpoint-config/></advanced-network>'));
  assert.match(r.warnings.join(), /declares endpoints but is not enabled/);
  assert.match(failXml('<advanced-network><wan-server-socket-endpoint-config name="a"/><wan-server-socket-endpoint-config name="a"/></advanced-network>'), /name a is given twice/);
});

test('xml: maps: default always exists, a declared default replaces the built-in one', () => {
  assert.deepEqual(okXml('<map name="a"/>').maps.map((m) => m.name), ['default', 'a']);
  const c = okXml('<map name="a"/><map name="default"><backup-count>3</backup-count></map>');
  assert.deepEqual(c.maps.map((m) => [m.name, m.backupCount]), [['a', 1], ['default', 3]]);
  assert.deepEqual(okXml('<queue name="a"/>').queues.map((q) => q.name), ['default', 'a']);
  assert.match(failXml('<map><backup-count>1</backup-count></map>'), /<map> needs attribute name/);
});

test('xml: a wildcard name has at most one "*"', () => {
  assert.equal(okXml('<map name="a*"/>').maps[1]?.name, 'a*');
  assert.equal(failXml('<map name="a*b*"/>'), '/w/grid.xml:2:6: <map> attribute name: expected a name with at most one "*" wildcard, got "a*b*"');
  assert.match(failXml('<queue name="**"/>'), /at most one "\*"/);
});

test('xml: eviction: size 1..2147483647, policies NONE|LRU|LFU|RANDOM, only PER_NODE', () => {
  assert.equal(okXml('<map name="m"><eviction eviction-policy="random" size="1"/></map>').maps[1]?.eviction.policy, 'RANDOM');
  assert.equal(okXml('<map name="m"><eviction eviction-policy="LFU" size="2147483647"/></map>').maps[1]?.eviction.size, 2147483647);
  assert.match(failXml('<map name="m"><eviction size="0"/></map>'), /<eviction> attribute size: expected an integer >= 1, got "0"/);
  assert.match(failXml('<map name="m"><eviction size="2147483648"/></map>'), /expected an integer >= 1, got "2147483648"/);
  assert.match(failXml('<map name="m"><eviction eviction-policy="LRV"/></map>'), /expected one of NONE, LRU, LFU, RANDOM \(did you mean LRU\?\), got "LRV"/);
  assert.equal(
    failXml('<map name="m"><eviction max-size-policy="PER_PARTITION"/></map>'),
    '/w/grid.xml:2:25: <eviction> attribute max-size-policy: expected PER_NODE (only PER_NODE is supported), got "PER_PARTITION"',
  );
});

test('xml: merkle-tree depth 2..27', () => {
  assert.equal(okXml('<map name="m"><merkle-tree enabled="true"><depth>27</depth></merkle-tree></map>').maps[1]?.merkleTree.depth, 27);
  assert.match(failXml('<map name="m"><merkle-tree><depth>1</depth></merkle-tree></map>'), /<merkle-tree> element <depth>: expected an integer 2..27/);
});

test('xml: merge policies: the listed names, with or without the com.hazelcast.spi.merge. prefix', () => {
  const wan = '<wan-replication name="w"><batch-publisher><target-endpoints>h:1</target-endpoints></batch-publisher></wan-replication>';
  for (const p of ['PassThroughMergePolicy', 'PutIfAbsentMergePolicy', 'LatestUpdateMergePolicy', 'HigherHitsMergePolicy', 'LatestAccessMergePolicy', 'ExpirationTimeMergePolicy', 'DiscardMergePolicy']) {
    for (const written of [p, `com.hazelcast.spi.merge.${p}`]) {
      const c = okXml(`<map name="m"><wan-replication-ref name="w"><merge-policy-class-name>${written}</merge-policy-class-name></wan-replication-ref></map>${wan}`);
      assert.equal(c.maps[1]?.wanReplicationRef?.mergePolicy, p);
    }
  }
  const d = okXml(`<map name="m"><wan-replication-ref name="w"/></map>${wan}`);
  assert.deepEqual(d.maps[1]?.wanReplicationRef, { name: 'w', mergePolicy: 'PassThroughMergePolicy', republishingEnabled: true });
  assert.match(
    failXml(`<map name="m"><wan-replication-ref name="w"><merge-policy-class-name>LatestUpdatePolicy</merge-policy-class-name></wan-replication-ref></map>${wan}`),
    /<wan-replication-ref> element <merge-policy-class-name>: expected one of PassThroughMergePolicy, .* \(did you mean LatestUpdateMergePolicy\?\), got "LatestUpdatePolicy"/,
  );
  assert.match(failXml(`<map name="m"><wan-replication-ref name="w"><merge-policy-class-name>org.x.PassThroughMergePolicy</merge-policy-class-name></wan-replication-ref></map>${wan}`), /expected one of/);
});

test('xml: split-brain merge-policy on maps and queues: names, prefix, batch-size 1..10000, queue restriction', () => {
  for (const p of ['PassThroughMergePolicy', 'PutIfAbsentMergePolicy', 'LatestUpdateMergePolicy', 'HigherHitsMergePolicy', 'LatestAccessMergePolicy', 'ExpirationTimeMergePolicy', 'DiscardMergePolicy']) {
    for (const written of [p, `com.hazelcast.spi.merge.${p}`, ` ${p.toLowerCase()} `]) {
      assert.deepEqual(okXml(`<map name="m"><merge-policy>${written}</merge-policy></map>`).maps[1]?.mergePolicy, { policy: p, batchSize: 100 });
    }
  }
  assert.deepEqual(okXml('<map name="m"><merge-policy batch-size="1"/></map>').maps[1]?.mergePolicy, { policy: 'PutIfAbsentMergePolicy', batchSize: 1 }, 'no name keeps the default policy');
  assert.deepEqual(okXml('<map name="m"><merge-policy batch-size="10000">${P}</merge-policy></map>', { env: { P: 'PassThroughMergePolicy' } }).maps[1]?.mergePolicy, {
    policy: 'PassThroughMergePolicy',
    batchSize: 10000,
  });
  for (const p of ['PutIfAbsentMergePolicy', 'DiscardMergePolicy']) {
    assert.deepEqual(okXml(`<queue name="q"><merge-policy batch-size="3">com.hazelcast.spi.merge.${p}</merge-policy></queue>`).queues[1]?.mergePolicy, { policy: p, batchSize: 3 });
  }
  assert.equal(failXml('<map name="m">\n<merge-policy batch-size="0">PassThroughMergePolicy</merge-policy></map>'), '/w/grid.xml:3:15: <merge-policy> attribute batch-size: expected an integer 1..10000, got "0"');
  assert.match(failXml('<map name="m"><merge-policy batch-size="10001"/></map>'), /batch-size: expected an integer 1\.\.10000, got "10001"/);
  assert.equal(
    failXml('<map name="m">\n  <merge-policy>LatestUpdatePolicy</merge-policy></map>'),
    '/w/grid.xml:3:3: <map> element <merge-policy>: expected one of PassThroughMergePolicy, PutIfAbsentMergePolicy, LatestUpdateMergePolicy, HigherHitsMergePolicy, LatestAccessMergePolicy, ExpirationTimeMergePolicy, DiscardMergePolicy (did you mean LatestUpdateMergePolicy?), got "LatestUpdatePolicy"',
  );
  assert.match(failXml('<map name="m"><merge-policy>org.x.PassThroughMergePolicy</merge-policy></map>'), /<map> element <merge-policy>: expected one of/);
  assert.equal(
    failXml('<queue name="q">\n<merge-policy>LatestUpdateMergePolicy</merge-policy></queue>'),
    '/w/grid.xml:3:1: <queue> element <merge-policy>: expected PutIfAbsentMergePolicy or DiscardMergePolicy (a queue accepts no other merge policy), got "LatestUpdateMergePolicy"',
  );
  assert.match(failXml('<queue name="q"><merge-policy>DiscardMergePolcy</merge-policy></queue>'), /expected one of PutIfAbsentMergePolicy, DiscardMergePolicy \(did you mean DiscardMergePolicy\?\), got "DiscardMergePolcy"/);
  assert.match(failXml('<map name="m"><merge-policy batch-sise="5"/></map>'), /unknown attribute batch-sise \(did you mean batch-size\?\)/);
  assert.match(failXml('<map name="m"><merge-policy/><merge-policy/></map>'), /element <merge-policy> is given twice/);
  assert.match(failXml('<map name="m"><merge-policy><x/></merge-policy></map>'), /<merge-policy>: unknown element <x>/);
});

test('xml: wan-replication publishers: ids unique, endpoints required and checked, enums checked', () => {
  const pub = (inner: string): string => `<wan-replication name="w"><batch-publisher>${inner}</batch-publisher></wan-replication>`;
  assert.match(failXml(pub('<cluster-name>b</cluster-name>')), /<batch-publisher> needs <target-endpoints> with at least one host:port/);
  assert.match(failXml(pub('<target-endpoints>h</target-endpoints>')), /<batch-publisher> element <target-endpoints>: expected host:port with a port 1..65535, got "h"/);
  assert.match(failXml(pub('<target-endpoints>h:1</target-endpoints><acknowledge-type>ACK</acknowledge-type>')), /expected one of ACK_ON_OPERATION_COMPLETE, ACK_ON_RECEIPT/);
  assert.match(failXml(pub('<target-endpoints>h:1</target-endpoints><batch-size>0</batch-size>')), /<batch-size>: expected an integer 1..100000/);
  assert.match(
    failXml('<wan-replication name="w"><batch-publisher><target-endpoints>h:1</target-endpoints></batch-publisher><batch-publisher><target-endpoints>h:2</target-endpoints></batch-publisher></wan-replication>'),
    /publisher id dev is used twice in <wan-replication name="w">/,
  );
});

test('xml: persistence and cp-subsystem values are checked', () => {
  assert.match(failXml('<persistence><cluster-data-recovery-policy>ANY</cluster-data-recovery-policy></persistence>'), /expected one of FULL_RECOVERY_ONLY, PARTIAL_RECOVERY_MOST_RECENT, PARTIAL_RECOVERY_MOST_COMPLETE/);
  assert.match(failXml('<persistence><validation-timeout-seconds>0</validation-timeout-seconds></persistence>'), /expected an integer 1..86400/);
  assert.equal(okXml('<cp-subsystem><cp-member-count>3</cp-member-count></cp-subsystem>').cpSubsystem.cpMemberCount, 3);
  assert.equal(okXml('<cp-subsystem><cp-member-count>0</cp-member-count></cp-subsystem>').cpSubsystem.cpMemberCount, 0);
  assert.equal(failXml('<cp-subsystem><cp-member-count>2</cp-member-count></cp-subsystem>'), '/w/grid.xml:2:15: <cp-subsystem> element <cp-member-count>: expected 0 (CP subsystem off) or an integer >= 3, got "2"');
  assert.match(failXml('<cp-subsystem><group-size>4</group-size></cp-subsystem>'), /<group-size>: expected 3, 5 or 7, got "4"/);
  assert.match(failXml('<cp-subsystem><group-size>9</group-size></cp-subsystem>'), /expected 3, 5 or 7, got "9"/);
});

// ---------------------------------------------------------------- placeholders and properties

test('placeholders: from <properties> first, then the environment, in text and attributes', () => {
  const c = okXml(
    '<properties><property name="cn">from-props</property><property name="bc">2</property></properties>\n' +
      '<cluster-name>${cn}</cluster-name><instance-name>i-${HOSTNAME}</instance-name>\n' +
      '<map name="${MAPNAME}"><backup-count>${bc}</backup-count></map>',
    { env: { cn: 'from-env', HOSTNAME: 'box1', MAPNAME: 'orders' } },
  );
  assert.equal(c.clusterName, 'from-props');
  assert.equal(c.instanceName, 'i-box1');
  assert.equal(c.maps[1]?.name, 'orders');
  assert.equal(c.maps[1]?.backupCount, 2);
});

test('placeholders: property values may use the environment; a non-placeholder "${" stays literal', () => {
  const c = okXml('<properties><property name="grid.partition.count">${PC}</property></properties><instance-name>a$b${ x}</instance-name>', { env: { PC: '13' } });
  assert.equal(c.properties.partitionCount, 13);
  assert.equal(c.instanceName, 'a$b${ x}');
});

test('placeholders: an unresolved placeholder is an error at its position', () => {
  assert.equal(failXml('<cluster-name>${NOPE}</cluster-name>'), '/w/grid.xml:2:1: placeholder ${NOPE} is not defined in <properties> or the environment');
  assert.equal(failXml('<map name="${NOPE}"/>'), '/w/grid.xml:2:6: placeholder ${NOPE} is not defined in <properties> or the environment');
});

test('properties: unknown grid.* names are errors with a hint, other names are kept raw', () => {
  assert.equal(
    failXml('<properties>\n  <property name="grid.partition.cont">7</property>\n</properties>'),
    '/w/grid.xml:3:3: unknown property grid.partition.cont (did you mean grid.partition.count?)',
  );
  assert.deepEqual(okXml('<properties><property name="hazelcast.x">1</property></properties>').rawProperties, { 'hazelcast.x': '1' });
  assert.match(failXml('<properties><property>1</property></properties>'), /<property> needs attribute name/);
});

test('properties: every grid property can be set and is range-checked (integers) or checked as true/false (booleans)', () => {
  for (const spec of GRID_PROPERTY_SPECS) {
    if (spec.kind === 'boolean') {
      for (const [text, value] of [['false', false], ['TRUE', true], [' False ', false]] as const) {
        assert.equal(okXml(`<properties><property name="${spec.name}">${text}</property></properties>`).properties[spec.key], value, `${spec.name}=${text}`);
      }
      for (const bad of ['1', 'yes', '']) {
        assert.match(failXml(`<properties><property name="${spec.name}">${bad}</property></properties>`), new RegExp(`property ${spec.name.replace(/\./g, '\\.')}: expected true or false`));
      }
      continue;
    }
    // Heartbeat settings are constrained by the timing rules; keep the others at their defaults.
    const value = spec.key === 'heartbeatIntervalSeconds' ? 1 : spec.max === 2147483647 ? spec.min + 1000 : spec.max;
    const c = okXml(`<properties><property name="${spec.name}">${value}</property></properties>`);
    assert.equal(c.properties[spec.key], value, spec.name);
    assert.match(failXml(`<properties><property name="${spec.name}">${spec.min - 1}</property></properties>`), new RegExp(`property ${spec.name.replace(/\./g, '\\.')}: expected an integer`));
    assert.match(failXml(`<properties><property name="${spec.name}">x</property></properties>`), /expected an integer/);
  }
});

test('names of Object.prototype members are not special anywhere', () => {
  assert.match(failXml('<cluster-name>${constructor}</cluster-name>'), /placeholder \$\{constructor\} is not defined/);
  assert.match(failXml('<cluster-name>&toString;</cluster-name>'), /unknown entity &toString;/);
  assert.match(fail({ env: { GRID_constructor: 'x' } }), /environment variable GRID_constructor is unknown/);
  assert.match(failXml('<logging level="__proto__"/>'), /expected one of OFF/);
  const c = okXml('<properties><property name="__proto__">p</property><property name="toString">t</property></properties><cluster-name>${__proto__}-${toString}</cluster-name>');
  assert.equal(c.clusterName, 'p-t');
  assert.equal(Object.getOwnPropertyDescriptor(c.rawProperties, '__proto__')?.value, 'p');
});

// ---------------------------------------------------------------- validation rules

test('rule: backup-count + async-backup-count <= 6, for maps and queues', () => {
  assert.equal(okXml('<map name="m"><backup-count>3</backup-count><async-backup-count>3</async-backup-count></map>').maps[1]?.asyncBackupCount, 3);
  assert.equal(
    failXml('<map name="m"><backup-count>4</backup-count><async-backup-count>3</async-backup-count></map>'),
    '/w/grid.xml:2:1: <map name="m">: backup-count + async-backup-count must be at most 6, got 4 + 3',
  );
  assert.match(failXml('<queue name="q"><backup-count>6</backup-count><async-backup-count>1</async-backup-count></queue>'), /<queue name="q">: backup-count \+ async-backup-count must be at most 6, got 6 \+ 1/);
  // The rule also holds when an override makes the sum too large; the message names the variable.
  assert.equal(
    failXml('<map name="m"><async-backup-count>3</async-backup-count></map>', { env: { GRID_MAP_M_BACKUPCOUNT: '4' } }),
    'environment variable GRID_MAP_M_BACKUPCOUNT: <map name="m">: backup-count + async-backup-count must be at most 6, got 4 + 3',
  );
});

test('rule: partition count 1..32768', () => {
  assert.equal(okXml('<properties><property name="grid.partition.count">32768</property></properties>').properties.partitionCount, 32768);
  assert.equal(okXml('<properties><property name="grid.partition.count">1</property></properties>').properties.partitionCount, 1);
  assert.match(failXml('<properties><property name="grid.partition.count">0</property></properties>'), /property grid.partition.count: expected an integer 1..32768, got "0"/);
  // Refusal-based detection: at least one fault, at least 10 ms between counted faults, integers only.
  assert.match(failXml('<properties><property name="grid.connection.monitor.max.faults">0</property></properties>'), /property grid.connection.monitor.max.faults: expected an integer 1..1000, got "0"/);
  assert.match(failXml('<properties><property name="grid.connection.monitor.interval">9</property></properties>'), /property grid.connection.monitor.interval: expected an integer 10..60000, got "9"/);
  assert.match(failXml('<properties><property name="grid.connection.monitor.interval">100.5</property></properties>'), /property grid.connection.monitor.interval: expected an integer/);
  assert.equal(okXml('<properties><property name="grid.connection.monitor.interval">10</property><property name="grid.connection.monitor.max.faults">1</property></properties>').properties.connectionMonitorIntervalMs, 10);
  assert.match(failXml('<properties><property name="grid.partition.count">32769</property></properties>'), /expected an integer 1..32768, got "32769"/);
});

test('rule: ports 1..65535 in the file; 0 (OS-chosen) only from --port or GRID_NETWORK_PORT_PORT', () => {
  assert.equal(okXml('<network><port>65535</port></network>').network.port.port, 65535);
  assert.equal(okXml('<network><port>1</port></network>').network.port.port, 1);
  assert.match(failXml('<network><port>0</port></network>'), /expected a port 1..65535/);
  assert.equal(ok({ argv: ['--port', '0'] }).config.network.port.port, 0);
  assert.equal(ok({ env: { GRID_NETWORK_PORT_PORT: '0' } }).config.network.port.port, 0);
  assert.match(failXml('<advanced-network><member-server-socket-endpoint-config><port>0</port></member-server-socket-endpoint-config></advanced-network>'), /expected a port 1..65535/);
});

test('rule: two patterns that tie for some name are reported at load time', () => {
  assert.equal(failXml('<map name="a*"/>\n<map name="*a"/>'), '/w/grid.xml:3:1: <map> patterns "a*" and "*a" tie: a name can match both with the same number of literal characters; make one more specific');
  assert.match(failXml('<map name="ab*"/><map name="a*c"/>'), /patterns "ab\*" and "a\*c" tie/);
  assert.match(failXml('<queue name="q-*"/><queue name="*-x"/>'), /<queue> patterns "q-\*" and "\*-x" tie/);
  // No tie: different literal counts, incompatible prefixes, or incompatible suffixes.
  okXml('<map name="a*"/><map name="ab*"/><map name="b*"/><map name="c*y"/><map name="c*z"/><map name="abc"/><map name="xy*"/><map name="x*zz"/>');
});

test('rule: heartbeat interval x 3 <= max-no-heartbeat', () => {
  const props = (hb: number, max: number): string =>
    `<properties><property name="grid.heartbeat.interval.seconds">${hb}</property>\n<property name="grid.max.no.heartbeat.seconds">${max}</property></properties>`;
  assert.equal(okXml(props(3, 9)).properties.maxNoHeartbeatSeconds, 9);
  assert.equal(failXml(props(4, 11)), '/w/grid.xml:3:1: grid.max.no.heartbeat.seconds (11) must be at least 3 x grid.heartbeat.interval.seconds (4)');
  assert.match(fail({ env: { GRID_PROPERTY_GRID_MAX_NO_HEARTBEAT_SECONDS: '2' } }), /^environment variable GRID_PROPERTY_GRID_MAX_NO_HEARTBEAT_SECONDS: grid\.max\.no\.heartbeat\.seconds \(2\)/);
});

test('rule: operation call timeout > heartbeat interval', () => {
  const props = (hb: number, ms: number): string =>
    `<properties><property name="grid.heartbeat.interval.seconds">${hb}</property><property name="grid.max.no.heartbeat.seconds">60</property><property name="grid.operation.call.timeout.millis">${ms}</property></properties>`;
  assert.equal(okXml(props(2, 2001)).properties.operationCallTimeoutMs, 2001);
  assert.match(failXml(props(2, 2000)), /grid\.operation\.call\.timeout\.millis \(2000\) must be greater than grid\.heartbeat\.interval\.seconds in milliseconds \(2000\)/);
});

test('rule: wan-replication-ref must name a wan-replication', () => {
  assert.equal(
    failXml('<map name="m">\n  <wan-replication-ref name="to-b"/>\n</map>'),
    '/w/grid.xml:3:3: <map name="m"> <wan-replication-ref name="to-b">: no <wan-replication> has this name (no <wan-replication> is configured)',
  );
  assert.match(failXml('<map name="m"><wan-replication-ref name="to-b"/></map><wan-replication name="to-c"/>'), /\(configured: to-c\)/);
});

test('rule: security enabled needs member-authentication naming a realm with an identity', () => {
  const realm = (identity: string): string =>
    `<realms><realm name="r"><authentication><simple><user username="u" password="p"/></simple></authentication>${identity}</realm></realms>`;
  const id = '<identity><username-password username="m" password="x"/></identity>';
  assert.equal(okXml(`<security enabled="true">${realm(id)}<member-authentication realm="r"/></security>`).security.enabled, true);
  assert.equal(failXml(`<security enabled="true">${realm(id)}</security>`), '/w/grid.xml:2:1: <security enabled="true"> needs <member-authentication realm="..."/>');
  assert.match(failXml(`<security enabled="true">${realm(id)}<member-authentication realm="other"/></security>`), /<member-authentication realm="other">: no <realm> has this name/);
  assert.match(failXml(`<security enabled="true">${realm('')}<member-authentication realm="r"/></security>`), /the realm needs an <identity>/);
  assert.match(failXml('<security><realms><realm name="r"/><realm name="r"/></realms></security>'), /<realm>: name r is given twice/);
  assert.match(failXml('<security><realms><realm name="r"><authentication><simple><user username="u"/><user username="u"/></simple></authentication></realm></realms></security>'), /username u is given twice/);
  // The console's roles (spec/console.md "Security").
  assert.match(failXml('<security><realms><realm name="r"><authentication><simple><user username="u" roles="root"/></simple></authentication></realm></realms></security>'), /<user> u: roles must be one of admin, operator, read-only, not "root"/);
  assert.equal(okXml('<security><realms><realm name="r"><authentication><simple><user username="u" roles=" operator "/></simple></authentication></realm></realms></security>').security.realms[0]?.users[0]?.role, 'operator');
  // Disabled security is not checked.
  assert.equal(okXml(`<security enabled="false">${realm('')}</security>`).security.enabled, false);
});

test('rule: an empty password is allowed, with a warning', () => {
  const r = ok(
    xml(
      '<security enabled="true"><realms><realm name="r"><authentication><simple><user username="u" password=""/></simple></authentication>' +
        '<identity><username-password username="m" password=""/></identity></realm></realms><member-authentication realm="r"/></security>',
    ),
  );
  assert.deepEqual(r.warnings, ['realm r: user u has an empty password', 'realm r: identity m has an empty password']);
});

test('rule: ssl enabled needs readable key and certificate files (checked through the injected function)', () => {
  const sslXml = (attrs: string): string => `<network><ssl enabled="true" ${attrs}/></network>`;
  assert.equal(failXml(sslXml('cert-file="c.pem"')), '/w/grid.xml:2:10: <network> <ssl> enabled needs key-file');
  assert.equal(failXml(sslXml('key-file="k.pem" cert-file="c.pem"')), '/w/grid.xml:2:10: <network> <ssl> key-file: cannot read "/w/k.pem"');
  assert.match(failXml(sslXml('key-file="k.pem" cert-file="/etc/c.pem"'), { readable: ['/w/k.pem'] }), /cert-file: cannot read "\/etc\/c\.pem"/);
  const c = okXml(sslXml('key-file="k.pem" cert-file="/etc/c.pem"'), { readable: ['/w/k.pem', '/etc/c.pem'] });
  assert.deepEqual(c.network.ssl, { enabled: true, keyFile: 'k.pem', certFile: '/etc/c.pem', caFile: '', clientAuth: 'none' });
  assert.match(failXml(sslXml('key-file="k.pem" cert-file="/etc/c.pem" client-auth="required"'), { readable: ['/w/k.pem', '/etc/c.pem'] }), /enabled needs ca-file/);
  assert.match(
    failXml('<advanced-network enabled="true"><member-server-socket-endpoint-config/><rest-server-socket-endpoint-config><ssl enabled="true" key-file="k" cert-file="c"/></rest-server-socket-endpoint-config></advanced-network>'),
    /<rest-server-socket-endpoint-config> <ssl> key-file: cannot read "\/w\/k"/,
  );
  assert.match(failXml('<network><ssl client-auth="maybe"/></network>'), /expected one of none, optional, required/);
});

test('rule: cp-member-count 0 or >= 3, group-size 3/5/7 and not above the member count', () => {
  const seven = okXml('<cp-subsystem><cp-member-count>7</cp-member-count><group-size>7</group-size></cp-subsystem>').cpSubsystem;
  assert.deepEqual([seven.cpMemberCount, seven.groupSize], [7, 7]);
  assert.equal(failXml('<cp-subsystem><cp-member-count>3</cp-member-count><group-size>5</group-size></cp-subsystem>'), '/w/grid.xml:2:1: <cp-subsystem>: group-size (5) must not exceed cp-member-count (3)');
  assert.equal(okXml('<cp-subsystem><group-size>7</group-size></cp-subsystem>').cpSubsystem.groupSize, 7);
});

test('rule: data-persistence without <persistence enabled> is a warning', () => {
  const r = ok(xml('<map name="m"><data-persistence enabled="true"/></map>'));
  assert.match(r.warnings.join(), /data-persistence is enabled for map m but <persistence> is not enabled/);
  assert.deepEqual(ok(xml('<persistence enabled="true"/><map name="m"><data-persistence enabled="true"/></map>')).warnings, []);
});

// ---------------------------------------------------------------- environment variables

// ---------------------------------------------------------------- interfaces and bind-any

/** A machine with a loopback interface (127.0.0.0/8) and one Ethernet address. */
const LOCALS: LocalInterface[] = [
  { name: 'lo', address: '127.0.0.1', family: 'IPv4', internal: true, cidr: '127.0.0.1/8' },
  { name: 'lo', address: '::1', family: 'IPv6', internal: true, cidr: '::1/128' },
  { name: 'eth0', address: '192.0.2.2', family: 'IPv4', internal: false, cidr: '192.0.2.2/24' },
];

test('interfaces: patterns are read as written (trimmed); a malformed one is an error at its <interface>', () => {
  const c = ok(xml('<network>\n  <interfaces enabled="true">\n    <interface>192.0.2.*</interface>\n  </interfaces>\n</network>', { locals: LOCALS })).config;
  assert.deepEqual(c.network.interfaces, { enabled: true, interfaces: ['192.0.2.*'] });
  const expected = 'expected an IPv4 address pattern: four parts separated by dots, each 0..255, * or a rising range such as 4-18 (e.g. 10.0.*.*, 10.3.10.4-18)';
  assert.equal(
    failXml('<network>\n  <interfaces enabled="true">\n    <interface>10.0.0.1.5</interface>\n  </interfaces>\n</network>'),
    `/w/grid.xml:4:5: <interfaces> element <interface>: ${expected}, got "10.0.0.1.5"`,
  );
  assert.match(failXml('<network><interfaces>\n<interface>10.0.0.256</interface></interfaces></network>'), /^\/w\/grid\.xml:3:1: <interfaces> element <interface>: expected an IPv4 address pattern.*got "10\.0\.0\.256"$/);
  assert.match(failXml('<network><interfaces><interface>eth0</interface></interfaces></network>'), /got "eth0"$/);
  assert.match(failXml('<network><interfaces><interface>10.0.0.18-4</interface></interfaces></network>'), /got "10\.0\.0\.18-4"$/);
  assert.match(failXml('<network><interfaces><interface></interface></interfaces></network>'), /got ""$/);
  // Malformed patterns are refused even when interfaces are not enabled.
  assert.match(failXml('<network><interfaces enabled="false"><interface>x</interface></interfaces></network>'), /got "x"$/);
  assert.match(failXml('<network><interfaces enabled="yes"/></network>'), /<interfaces> attribute enabled: expected true or false/);
  assert.match(failXml('<network><interfaces><interfce>1.2.3.4</interfce></interfaces></network>'), /unknown element <interfce> \(did you mean <interface>\?\)/);
  assert.match(failXml('<network><interfaces/><interfaces/></network>'), /element <interfaces> is given twice/);
});

test('interfaces: enabled patterns that match no local address are refused at the <interfaces> element', () => {
  const body = '<network>\n  <interfaces enabled="true">\n    <interface>10.9.*.*</interface>\n    <interface>172.16.0.1</interface>\n  </interfaces>\n</network>';
  assert.equal(
    fail(xml(body, { locals: LOCALS })),
    '/w/grid.xml:3:3: <interfaces enabled="true">: no local address matches 10.9.*.*, 172.16.0.1 (IPv4 addresses of this machine: 127.0.0.1, 192.0.2.2; any exact 127.x.y.z address also works on Linux)',
  );
  // The same file is accepted on a machine that has a matching address.
  ok(xml(body, { locals: [...LOCALS, { name: 'eth1', address: '172.16.0.1', family: 'IPv4', internal: false, cidr: '172.16.0.1/12' }] }));
  // An exact loopback-network address is local on a machine with lo 127.0.0.1/8.
  ok(xml('<network><interfaces enabled="true"><interface>127.0.0.11</interface></interfaces></network>', { locals: LOCALS }));
  // Without the machine's addresses (the loader's own tests) the match is not checked.
  ok(xml(body));
  // Enabled with no pattern at all is refused wherever it comes from.
  assert.equal(failXml('<network>\n<interfaces enabled="true"/></network>'), '/w/grid.xml:3:1: <interfaces enabled="true"> lists no <interface>');
  assert.equal(fail({ env: { GRID_NETWORK_INTERFACES_ENABLED: 'true' } }), 'environment variable GRID_NETWORK_INTERFACES_ENABLED: <interfaces enabled="true"> lists no <interface>');
  // Switched on from the environment: the message names the variable that did it.
  assert.match(
    fail(xml('<network><interfaces enabled="false"><interface>10.9.*.*</interface></interfaces></network>', { env: { GRID_NETWORK_INTERFACES_ENABLED: 'true' }, locals: LOCALS })),
    /^environment variable GRID_NETWORK_INTERFACES_ENABLED: <interfaces enabled="true">: no local address matches 10\.9\.\*\.\*/,
  );
  // Listed but not enabled: ignored, with a warning.
  const { warnings } = ok(xml('<network><interfaces><interface>10.9.*.*</interface></interfaces></network>', { locals: LOCALS }));
  assert.deepEqual(warnings, ['<interfaces> lists patterns but is not enabled: they are ignored']);
});

test('interfaces and bind-any from the environment; --print-config shows them and loads back', () => {
  const setup: Setup = {
    env: { GRID_NETWORK_INTERFACES_ENABLED: 'TRUE', GRID_NETWORK_INTERFACES_INTERFACE: '10.0.*.*, 192.0.2.1-9;127.0.0.12', GRID_PROPERTY_GRID_SOCKET_BIND_ANY: 'false' },
    locals: LOCALS,
  };
  const c = ok(setup).config;
  assert.deepEqual(c.network.interfaces, { enabled: true, interfaces: ['10.0.*.*', '192.0.2.1-9', '127.0.0.12'] });
  assert.equal(c.properties.socketBindAny, false);
  // The environment's list replaces the file's.
  assert.deepEqual(ok(xml('<network><interfaces><interface>1.2.3.4</interface></interfaces></network>', setup)).config.network.interfaces.interfaces, ['10.0.*.*', '192.0.2.1-9', '127.0.0.12']);
  assert.equal(
    fail({ env: { GRID_NETWORK_INTERFACES_INTERFACE: '10.0.*.*,10.0.0.1000' } }),
    'environment variable GRID_NETWORK_INTERFACES_INTERFACE: expected an IPv4 address pattern: four parts separated by dots, each 0..255, * or a rising range such as 4-18 (e.g. 10.0.*.*, 10.3.10.4-18), got "10.0.0.1000"',
  );
  assert.equal(fail({ env: { GRID_NETWORK_INTERFACES_ENABLED: 'on' } }), 'environment variable GRID_NETWORK_INTERFACES_ENABLED: expected true or false, got "on"');
  assert.equal(fail({ env: { GRID_PROPERTY_GRID_SOCKET_BIND_ANY: '0' } }), 'environment variable GRID_PROPERTY_GRID_SOCKET_BIND_ANY: property grid.socket.bind.any: expected true or false, got "0"');
  assert.equal(fail({ env: { GRID_NETWORK_INTERFACE_ENABLED: 'true' } }), 'environment variable GRID_NETWORK_INTERFACE_ENABLED is unknown (did you mean GRID_NETWORK_INTERFACES_ENABLED?)');
  const text = printed(setup);
  assert.match(text, /<interfaces enabled="true">\n\s+<interface>10\.0\.\*\.\*<\/interface>\n\s+<interface>192\.0\.2\.1-9<\/interface>/);
  assert.match(text, /<property name="grid\.socket\.bind\.any">false<\/property>/);
  const again = ok({ files: { '/p/printed.xml': text }, argv: ['--config', '/p/printed.xml'], locals: LOCALS }).config;
  assert.deepEqual(comparable(again), comparable(c));
  assert.match(printed({}), /<interfaces enabled="false"\/>/);
});

test('env: the documented fixed variables', () => {
  const c = ok({
    env: {
      GRID_CLUSTERNAME: 'prod',
      GRID_INSTANCENAME: 'i1',
      GRID_NETWORK_PORT_PORT: '5801',
      GRID_NETWORK_PORT_AUTOINCREMENT: 'FALSE',
      GRID_NETWORK_PORT_PORTCOUNT: '7',
      GRID_NETWORK_PUBLICADDRESS: '10.1.1.1',
      GRID_NETWORK_RESTAPI_ENABLED: 'true',
      GRID_NETWORK_JOIN_TCPIP_ENABLED: 'true',
      GRID_NETWORK_JOIN_TCPIP_MEMBERLIST: 'a:5701, b,c:5701-5702',
      GRID_NETWORK_JOIN_TCPIP_CONNECTIONTIMEOUTSECONDS: '3',
      GRID_LITEMEMBER_ENABLED: 'true',
      GRID_LOGGING_LEVEL: 'finest',
      GRID_LOGGING_FORMAT: 'json',
      GRID_PERSISTENCE_ENABLED: 'true',
      GRID_PERSISTENCE_BASEDIR: '/d',
      GRID_CPSUBSYSTEM_CPMEMBERCOUNT: '3',
      GRID_CPSUBSYSTEM_GROUPSIZE: '3',
      PATH: '/bin',
      grid_lowercase: 'ignored',
    },
  }).config;
  assert.equal(c.clusterName, 'prod');
  assert.equal(c.instanceName, 'i1');
  assert.deepEqual(c.network.port, { port: 5801, autoIncrement: false, portCount: 7 });
  assert.equal(c.network.publicAddress, '10.1.1.1');
  assert.equal(c.network.restApi.enabled, true);
  assert.deepEqual(c.network.join.tcpIp, { enabled: true, connectionTimeoutSeconds: 3, members: ['a:5701', 'b', 'c:5701-5702'] });
  assert.equal(c.liteMember, true);
  assert.deepEqual(c.logging, { level: 'FINEST', format: 'json' });
  assert.equal(c.persistence.enabled, true);
  assert.equal(c.persistence.baseDir, '/d');
  assert.deepEqual({ cpMemberCount: c.cpSubsystem.cpMemberCount, groupSize: c.cpSubsystem.groupSize }, { cpMemberCount: 3, groupSize: 3 });
});

test('env: endpoint groups by any group name (with or without its underscores, HOT_RESTART too)', () => {
  const g = ok({
    env: {
      GRID_NETWORK_RESTAPI_ENDPOINTGROUPS_DATA_ENABLED: 'true',
      GRID_NETWORK_RESTAPI_ENDPOINTGROUPS_CLUSTER_WRITE_ENABLED: 'true',
      GRID_NETWORK_RESTAPI_ENDPOINTGROUPS_HEALTHCHECK_ENABLED: 'false',
      GRID_NETWORK_RESTAPI_ENDPOINTGROUPS_HOT_RESTART_ENABLED: 'true',
    },
  }).config.network.restApi.groups;
  assert.deepEqual(g, { CLUSTER_READ: true, CLUSTER_WRITE: true, HEALTH_CHECK: false, PERSISTENCE: true, WAN: false, DATA: true, CP: false });
  assert.match(fail({ env: { GRID_NETWORK_RESTAPI_ENDPOINTGROUPS_DTA_ENABLED: 'true' } }), /^environment variable GRID_NETWORK_RESTAPI_ENDPOINTGROUPS_DTA_ENABLED: unknown endpoint group DTA: .*did you mean DATA/);
});

test('env: GRID_MAP_<NAME>_<FIELD> creates a lower-cased map or overrides one matched ignoring case and dashes', () => {
  const c = ok(
    xml('<map name="Orders"><backup-count>0</backup-count></map><map name="my-map"/>', {
      env: {
        GRID_MAP_ORDERS_BACKUPCOUNT: '2',
        GRID_MAP_ORDERS_TIMETOLIVESECONDS: '60',
        GRID_MAP_MYMAP_MAXIDLESECONDS: '5',
        GRID_MAP_NEW_ONE_EVICTION_SIZE: '10',
        GRID_MAP_NEW_ONE_EVICTION_EVICTIONPOLICY: 'lfu',
        GRID_MAP_NEW_ONE_ASYNCBACKUPCOUNT: '1',
        GRID_MAP_DEFAULT_MERKLETREE_ENABLED: 'true',
      },
    }),
  ).config;
  const byName = new Map(c.maps.map((m) => [m.name, m]));
  assert.deepEqual([...byName.keys()], ['default', 'Orders', 'my-map', 'new_one']);
  assert.equal(byName.get('Orders')?.backupCount, 2);
  assert.equal(byName.get('Orders')?.timeToLiveSeconds, 60);
  assert.equal(byName.get('my-map')?.maxIdleSeconds, 5);
  assert.deepEqual(byName.get('new_one')?.eviction, { policy: 'LFU', maxSizePolicy: 'PER_NODE', size: 10 });
  assert.equal(byName.get('new_one')?.backupCount, 1, 'a created map starts from built-in defaults');
  assert.equal(byName.get('new_one')?.asyncBackupCount, 1);
  assert.equal(byName.get('default')?.merkleTree.enabled, true);
});

test('env: GRID_QUEUE_<NAME>_<FIELD>', () => {
  const c = ok({ env: { GRID_QUEUE_JOBS_MAXSIZE: '10', GRID_QUEUE_JOBS_BACKUPCOUNT: '0', GRID_QUEUE_JOBS_EMPTYQUEUETTL: '5' } }).config;
  assert.deepEqual(c.queues[1], {
    name: 'jobs',
    maxSize: 10,
    backupCount: 0,
    asyncBackupCount: 0,
    emptyQueueTtlSeconds: 5,
    dataPersistence: { enabled: false, fsync: false },
    mergePolicy: { policy: 'PutIfAbsentMergePolicy', batchSize: 100 },
  });
});

test('env: GRID_MAP_/GRID_QUEUE_<NAME>_MERGEPOLICY and _MERGEPOLICY_BATCHSIZE', () => {
  const c = ok(
    xml('<map name="orders"><merge-policy batch-size="5">HigherHitsMergePolicy</merge-policy></map>', {
      env: {
        GRID_MAP_ORDERS_MERGEPOLICY: 'com.hazelcast.spi.merge.LatestAccessMergePolicy',
        GRID_MAP_CACHE_MERGEPOLICY_BATCHSIZE: '10000',
        GRID_QUEUE_JOBS_MERGEPOLICY: 'discardmergepolicy',
        GRID_QUEUE_JOBS_MERGEPOLICY_BATCHSIZE: '1',
      },
    }),
  ).config;
  const maps = new Map(c.maps.map((m) => [m.name, m.mergePolicy]));
  assert.deepEqual(maps.get('orders'), { policy: 'LatestAccessMergePolicy', batchSize: 5 }, 'the variable overrides the policy, the file keeps the batch size');
  assert.deepEqual(maps.get('cache'), { policy: 'PutIfAbsentMergePolicy', batchSize: 10000 });
  assert.deepEqual(c.queues.find((q) => q.name === 'jobs')?.mergePolicy, { policy: 'DiscardMergePolicy', batchSize: 1 });
  assert.equal(fail({ env: { GRID_MAP_ORDERS_MERGEPOLICY_BATCHSIZE: '0' } }), 'environment variable GRID_MAP_ORDERS_MERGEPOLICY_BATCHSIZE: expected an integer 1..10000, got "0"');
  assert.match(fail({ env: { GRID_MAP_ORDERS_MERGEPOLICY: 'LatestUpdatePolicy' } }), /^environment variable GRID_MAP_ORDERS_MERGEPOLICY: expected one of .*\(did you mean LatestUpdateMergePolicy\?\), got "LatestUpdatePolicy"$/);
  assert.equal(
    fail({ env: { GRID_QUEUE_JOBS_MERGEPOLICY: 'HigherHitsMergePolicy' } }),
    'environment variable GRID_QUEUE_JOBS_MERGEPOLICY: expected PutIfAbsentMergePolicy or DiscardMergePolicy (a queue accepts no other merge policy), got "HigherHitsMergePolicy"',
  );
  assert.equal(fail({ env: { GRID_MAP_ORDERS_MERGEPOLCY: 'x' } }), 'environment variable GRID_MAP_ORDERS_MERGEPOLCY is unknown (did you mean GRID_MAP_ORDERS_MERGEPOLICY?)');
});

test('env: an env name matching two configured maps is an error', () => {
  assert.match(failXml('<map name="ab"/><map name="a-b"/>', { env: { GRID_MAP_AB_BACKUPCOUNT: '1' } }), /AB matches both ab and a-b/);
});

test('env: GRID_PROPERTY_<NAME> sets properties (dots as underscores)', () => {
  const c = ok({ env: { GRID_PROPERTY_GRID_PARTITION_COUNT: '7', GRID_PROPERTY_APP_REGION: ' eu ' } }).config;
  assert.equal(c.properties.partitionCount, 7);
  assert.equal(c.rawProperties['grid.partition.count'], undefined, 'grid.* properties are typed, not raw');
  assert.equal(c.rawProperties['app.region'], 'eu');
  assert.equal(fail({ env: { GRID_PROPERTY_GRID_PARTITION_CONT: '7' } }), 'environment variable GRID_PROPERTY_GRID_PARTITION_CONT is unknown (did you mean GRID_PROPERTY_GRID_PARTITION_COUNT?)');
  assert.equal(fail({ env: { GRID_PROPERTY_GRID_PARTITION_COUNT: '0' } }), 'environment variable GRID_PROPERTY_GRID_PARTITION_COUNT: property grid.partition.count: expected an integer 1..32768, got "0"');
});

test('env: bad values name the variable and what was expected', () => {
  assert.equal(fail({ env: { GRID_NETWORK_PORT_PORT: 'abc' } }), 'environment variable GRID_NETWORK_PORT_PORT: expected a port 0..65535, got "abc"');
  assert.equal(fail({ env: { GRID_NETWORK_PORT_PORT: '65536' } }), 'environment variable GRID_NETWORK_PORT_PORT: expected a port 0..65535, got "65536"');
  assert.equal(fail({ env: { GRID_NETWORK_RESTAPI_ENABLED: 'on' } }), 'environment variable GRID_NETWORK_RESTAPI_ENABLED: expected true or false, got "on"');
  assert.equal(fail({ env: { GRID_MAP_ORDERS_BACKUPCOUNT: '9' } }), 'environment variable GRID_MAP_ORDERS_BACKUPCOUNT: expected an integer 0..6, got "9"');
  assert.match(fail({ env: { GRID_MAP_ORDERS_EVICTION_MAXSIZEPOLICY: 'PER_PARTITION' } }), /only PER_NODE is supported/);
  assert.match(fail({ env: { GRID_NETWORK_JOIN_TCPIP_MEMBERLIST: 'a:1,b:x' } }), /^environment variable GRID_NETWORK_JOIN_TCPIP_MEMBERLIST: expected host.*got "b:x"$/);
  assert.match(fail({ env: { GRID_CLUSTERNAME: '' } }), /^environment variable GRID_CLUSTERNAME: expected a non-empty name/);
});

test('env: an unknown GRID_ variable is an error with a hint', () => {
  assert.equal(fail({ env: { GRID_CLUSTERNAM: 'x' } }), 'environment variable GRID_CLUSTERNAM is unknown (did you mean GRID_CLUSTERNAME?)');
  assert.equal(fail({ env: { GRID_NETWORK_PORT_PROT: '1' } }), 'environment variable GRID_NETWORK_PORT_PROT is unknown (did you mean GRID_NETWORK_PORT_PORT?)');
  assert.equal(fail({ env: { GRID_MAP_ORDERS_BACKUPCONT: '1' } }), 'environment variable GRID_MAP_ORDERS_BACKUPCONT is unknown (did you mean GRID_MAP_ORDERS_BACKUPCOUNT?)');
  assert.equal(fail({ env: { GRID_MAPS_ORDERS_BACKUPCOUNT: '1' } }), 'environment variable GRID_MAPS_ORDERS_BACKUPCOUNT is unknown (did you mean GRID_MAP_ORDERS_BACKUPCOUNT?)');
  assert.equal(fail({ env: { GRID_WHATEVER: '1' } }), 'environment variable GRID_WHATEVER is unknown');
});

// ---------------------------------------------------------------- flags

test('flags: every value flag, in both spellings', () => {
  const c = ok({
    argv: ['--port', '6000', '--cluster-name=c1', '--instance-name', 'i1', '--public-address=1.2.3.4', '--lite', '--log-level', 'warning', '--log-format=json'],
  }).config;
  assert.equal(c.network.port.port, 6000);
  assert.equal(c.clusterName, 'c1');
  assert.equal(c.instanceName, 'i1');
  assert.equal(c.network.publicAddress, '1.2.3.4');
  assert.equal(c.liteMember, true);
  assert.deepEqual(c.logging, { level: 'WARNING', format: 'json' });
});

test('flags: --member repeats, turns tcp-ip on and replaces the configured list', () => {
  const c = okXml('<network><join><tcp-ip enabled="false"><member-list><member>old</member></member-list></tcp-ip></join></network>', {
    argv: ['--member', '127.0.0.1:5702', '--member=h2'],
  });
  assert.deepEqual(c.network.join.tcpIp.members, ['127.0.0.1:5702', 'h2']);
  assert.equal(c.network.join.tcpIp.enabled, true);
  assert.match(fail({ argv: ['--member', 'h:0'] }), /^flag --member: expected host/);
});

test('flags: --rest enables REST; --rest-groups adds groups to those on and implies --rest', () => {
  assert.equal(ok({ argv: ['--rest'] }).config.network.restApi.enabled, true);
  const c = okXml('<network><rest-api><endpoint-group name="CP"/></rest-api></network>', { argv: ['--rest-groups', 'DATA, wan', '--rest-groups=HOT_RESTART'] });
  assert.equal(c.network.restApi.enabled, true);
  assert.deepEqual(c.network.restApi.groups, { CLUSTER_READ: true, CLUSTER_WRITE: false, HEALTH_CHECK: true, PERSISTENCE: true, WAN: true, DATA: true, CP: true });
  const adv = okXml('<advanced-network enabled="true"><member-server-socket-endpoint-config/><rest-server-socket-endpoint-config/></advanced-network>', { argv: ['--rest-groups', 'DATA'] });
  assert.equal(adv.advancedNetwork.restEndpoint?.groups.DATA, true, 'also on a declared REST endpoint');
  assert.match(fail({ argv: ['--rest-groups', 'DATA,DTA'] }), /^flag --rest-groups: expected an endpoint group .*did you mean DATA.*got "DTA"$/);
  assert.match(fail({ argv: ['--rest-groups', ','] }), /^flag --rest-groups: expected a comma-separated list/);
});

test('flags: unknown flag, missing value, value on a switch, repeated flag, positional argument', () => {
  assert.equal(fail({ argv: ['--prot', '5701'] }), 'flag --prot is unknown (did you mean --port?)');
  assert.equal(fail({ argv: ['--cluster-nme=x'] }), 'flag --cluster-nme is unknown (did you mean --cluster-name?)');
  assert.equal(fail({ argv: ['--frobnicate'] }), 'flag --frobnicate is unknown');
  assert.equal(fail({ argv: ['--port'] }), 'flag --port needs a value (N)');
  assert.equal(fail({ argv: ['--cluster-name', '--rest'] }), 'flag --cluster-name needs a value (NAME)');
  assert.equal(fail({ argv: ['--rest=yes'] }), 'flag --rest takes no value');
  assert.equal(fail({ argv: ['--port', '1', '--port', '2'] }), 'flag --port is given twice');
  assert.equal(fail({ argv: ['5701'] }), 'unexpected argument "5701" (flags start with --; see --help)');
  assert.equal(fail({ argv: ['--port', 'x'] }), 'flag --port: expected a port 0..65535, got "x"');
  assert.equal(fail({ argv: ['--port=70000'] }), 'flag --port: expected a port 0..65535, got "70000"');
  assert.match(fail({ argv: ['--log-format', 'xml'] }), /^flag --log-format: expected one of text, json/);
  assert.match(fail({ argv: ['--log-level', 'LOUD'] }), /^flag --log-level: expected one of OFF/);
});

test('flags: --help documents every flag and exits 0, even with a broken config file', () => {
  const r = load({ argv: ['--help'], files: { '/w/grid.xml': '<broken' } });
  assert.equal(r.kind, 'exit');
  if (r.kind !== 'exit') return;
  assert.equal(r.code, 0);
  assert.equal(r.stderr, '');
  for (const f of FLAG_SPECS) assert.match(r.stdout, new RegExp(`--${f.name}\\b`), `--help mentions --${f.name}`);
  const short = load({ argv: ['-h'] });
  assert.equal(short.kind === 'exit' && short.code, 0);
});

test('flags: --version prints the version and exits 0', () => {
  assert.deepEqual(load({ argv: ['--version'] }), { kind: 'exit', code: 0, stdout: '9.9.9\n', stderr: '' });
});

// ---------------------------------------------------------------- precedence

test('precedence: defaults < XML < environment < flags', () => {
  const file = '<cluster-name>xml</cluster-name><network><port>5801</port></network><lite-member enabled="false"/>';
  assert.equal(okXml(file).clusterName, 'xml');
  const envOverXml = okXml(file, { env: { GRID_CLUSTERNAME: 'env', GRID_NETWORK_PORT_PORT: '5901' } });
  assert.equal(envOverXml.clusterName, 'env');
  assert.equal(envOverXml.network.port.port, 5901);
  const flagsOverAll = okXml(file, { env: { GRID_CLUSTERNAME: 'env', GRID_NETWORK_PORT_PORT: '5901' }, argv: ['--cluster-name', 'flag', '--port', '6001'] });
  assert.equal(flagsOverAll.clusterName, 'flag');
  assert.equal(flagsOverAll.network.port.port, 6001);
  // Values not overridden keep the lower source's value.
  assert.equal(okXml('<network><port auto-increment="false">5801</port></network>', { argv: ['--port', '7000'] }).network.port.autoIncrement, false);
  assert.equal(ok({ env: { GRID_LOGGING_LEVEL: 'FINE' }, argv: ['--log-level', 'SEVERE'] }).config.logging.level, 'SEVERE');
});

// ---------------------------------------------------------------- print-config

function printed(s: Setup, show = true): string {
  const r = load({ ...s, argv: [...(s.argv ?? []), '--print-config', ...(show ? ['--show-secrets'] : [])] });
  if (r.kind !== 'exit' || r.code !== 0) assert.fail(`print-config failed: ${JSON.stringify(r).slice(0, 300)}`);
  return r.stdout;
}

/** Config minus what cannot survive printing: the source. */
function comparable(c: Config): unknown {
  return { ...c, source: null };
}

test('print-config: the printed XML loads back into the same Config (defaults)', () => {
  const original = ok().config;
  const text = printed({});
  assert.match(text, /^<\?xml version="1\.0" encoding="UTF-8"\?>\n/);
  const again = ok({ files: { '/p/printed.xml': text }, argv: ['--config', '/p/printed.xml'] }).config;
  assert.deepEqual(comparable(again), comparable(original));
});

test('print-config: round trip of a file using every element, plus env and flag overrides', () => {
  const setup = xml(FULL.replace('password="pw"', 'password="a&quot;b&lt;c&amp;d&#9;e&#10;f"'), {
    env: { GRID_MAP_EXTRA_BACKUPCOUNT: '2', GRID_MAP_EXTRA_MERGEPOLICY: 'HigherHitsMergePolicy', GRID_QUEUE_JOBS_MERGEPOLICY_BATCHSIZE: '9', GRID_PROPERTY_APP_ZONE: 'z1' },
    argv: ['--port', '6100', '--rest-groups', 'CP'],
  });
  const original = ok(setup).config;
  assert.equal(original.security.realms[0]?.identity?.password, 'a"b<c&d\te\nf');
  assert.deepEqual(original.maps.find((m) => m.name === 'extra')?.mergePolicy, { policy: 'HigherHitsMergePolicy', batchSize: 100 });
  assert.deepEqual(original.queues.find((q) => q.name === 'jobs')?.mergePolicy, { policy: 'DiscardMergePolicy', batchSize: 9 });
  const text = printed(setup);
  const again = ok({ files: { '/p/printed.xml': text }, argv: ['--config', '/p/printed.xml'] }).config;
  assert.deepEqual(comparable(again), comparable(original));
  assert.equal(again.rawProperties['app.zone'], 'z1');
});

test('print-config masks passwords and secret-looking properties unless --show-secrets', () => {
  const setup = xml(FULL.replace('password="pw"', 'password="s3cret-identity"'), {
    env: { GRID_PROPERTY_DB_PASSWORD: 'hunter2', GRID_PROPERTY_API_TOKEN: 'tok-1', GRID_PROPERTY_APP_ZONE: 'z1', GRID_PROPERTY_ADMIN_PWD: 'pwd-9', GRID_PROPERTY_IDENTITY_SOURCE: 's3cret-identity' },
  });
  const original = ok(setup).config;
  const masked = printed(setup, false);
  assert.doesNotMatch(masked, /s3cret-identity|hunter2|tok-1|pwd-9/, 'by name, and a property holding a password whatever its name');
  for (const u of original.security.realms.flatMap((r) => r.users)) if (u.password !== '') assert.ok(!masked.includes(`password="${u.password}"`), 'user password masked');
  assert.match(masked, /<username-password username="[^"]*" password="\*\*\*\*"\/>/);
  assert.match(masked, /<property name="db.password">\*\*\*\*<\/property>/);
  assert.match(masked, /<property name="api.token">\*\*\*\*<\/property>/);
  assert.match(masked, /<property name="app.zone">z1<\/property>/, 'other properties print as they are');
  const shown = printed(setup, true);
  assert.match(shown, /s3cret-identity/);
  assert.match(shown, /hunter2/);
  assert.match(fail({ argv: ['--show-secrets'] }), /--show-secrets: it only applies with --print-config/);
});

test('print-config: a validation error still exits 2 instead of printing', () => {
  assert.match(fail(xml('<map name="m"><backup-count>6</backup-count><async-backup-count>1</async-backup-count></map>', { argv: ['--print-config'] })), /at most 6/);
});

// ---------------------------------------------------------------- did you mean

test('did-you-mean: hints across sources are close matches only', async () => {
  const { suggest, distance } = await import('../../src/config/did-you-mean.js');
  assert.equal(suggest('prot', ['port', 'config']), 'port');
  assert.equal(suggest('backup-cont', ['backup-count', 'async-backup-count']), 'backup-count');
  assert.equal(suggest('PORT', ['port']), 'port');
  assert.equal(suggest('xyz', ['port', 'config']), null);
  assert.equal(suggest('', ['a']), 'a');
  assert.equal(suggest('a', []), null);
  assert.equal(suggest('x'.repeat(100000), ['port']), null, 'huge inputs are cut short by length');
  assert.equal(distance('ab', 'ba'), 1);
  assert.equal(distance('kitten', 'sitting'), 3);
});

test('--port and GRID_NETWORK_PORT_PORT set the member endpoint under advanced networking', () => {
  const xml = `<grid><advanced-network enabled="true">
    <member-server-socket-endpoint-config><port>5801</port></member-server-socket-endpoint-config>
  </advanced-network></grid>`;
  const files = { '/w/grid.xml': xml };
  assert.equal(ok({ files, argv: ['--config', 'grid.xml'] }).config.advancedNetwork.memberEndpoint?.port.port, 5801);
  assert.equal(ok({ files, argv: ['--config', 'grid.xml', '--port', '5901'] }).config.advancedNetwork.memberEndpoint?.port.port, 5901);
  assert.equal(ok({ files, argv: ['--config', 'grid.xml'], env: { GRID_NETWORK_PORT_PORT: '6001' } }).config.advancedNetwork.memberEndpoint?.port.port, 6001);
  const rest = ok({ files, argv: ['--config', 'grid.xml', '--rest'] });
  assert.ok(rest.warnings.some((w) => /REST is not served/.test(w)), rest.warnings.join('; '));
});

test('names are limited in UTF-8 bytes, as the member protocol carries them', () => {
  assert.equal(ok({ argv: ['--cluster-name', 'é'.repeat(127)] }).config.clusterName.length, 127);
  assert.equal(load({ argv: ['--cluster-name', 'é'.repeat(128)] }).kind, 'exit');
});

// ---------------------------------------------------------------- cp-subsystem (spec/cp.md "Configuration")

const CP_FULL = `<cp-subsystem>
  <cp-member-count>5</cp-member-count>
  <session-time-to-live-seconds>60</session-time-to-live-seconds>
  <session-heartbeat-interval-seconds>2</session-heartbeat-interval-seconds>
  <missing-cp-member-auto-removal-seconds>600</missing-cp-member-auto-removal-seconds>
  <fail-on-indeterminate-operation-state>true</fail-on-indeterminate-operation-state>
  <persistence-enabled>true</persistence-enabled>
  <base-dir>raft</base-dir>
  <data-load-timeout-seconds>30</data-load-timeout-seconds>
  <raft-algorithm>
    <leader-election-timeout-in-millis>1500</leader-election-timeout-in-millis>
    <leader-heartbeat-period-in-millis>1000</leader-heartbeat-period-in-millis>
    <max-missed-leader-heartbeat-count>4</max-missed-leader-heartbeat-count>
    <append-request-max-entry-count>50</append-request-max-entry-count>
    <commit-index-advance-count-to-snapshot>2000</commit-index-advance-count-to-snapshot>
    <uncommitted-entry-count-to-reject-new-appends>20</uncommitted-entry-count-to-reject-new-appends>
    <append-request-backoff-timeout-in-millis>50</append-request-backoff-timeout-in-millis>
  </raft-algorithm>
  <semaphores><semaphore name="permits"><jdk-compatible>true</jdk-compatible><initial-permits>3</initial-permits></semaphore></semaphores>
  <locks><fenced-lock name="leader"><lock-acquire-limit>1</lock-acquire-limit></fenced-lock></locks>
</cp-subsystem>`;

test('cp-subsystem: defaults are spec/cp.md\'s; group-size follows cp-member-count when not given', () => {
  const c = ok().config.cpSubsystem;
  assert.deepEqual([c.sessionTimeToLiveSeconds, c.sessionHeartbeatIntervalSeconds, c.missingCpMemberAutoRemovalSeconds, c.failOnIndeterminateOperationState, c.persistenceEnabled, c.baseDir, c.dataLoadTimeoutSeconds], [300, 5, 14_400, false, false, 'cp-data', 120]);
  assert.deepEqual(c.raftAlgorithm, { leaderElectionTimeoutInMillis: 2000, leaderHeartbeatPeriodInMillis: 5000, maxMissedLeaderHeartbeatCount: 5, appendRequestMaxEntryCount: 100, commitIndexAdvanceCountToSnapshot: 10_000, uncommittedEntryCountToRejectNewAppends: 100, appendRequestBackoffTimeoutInMillis: 100 });
  const size = (n: number): number => okXml(`<cp-subsystem><cp-member-count>${n}</cp-member-count></cp-subsystem>`).cpSubsystem.groupSize;
  assert.deepEqual([size(3), size(4), size(5), size(6), size(9)], [3, 3, 5, 5, 7]);
});

test('cp-subsystem: every element is read, and printed back', () => {
  const setup = xml(CP_FULL);
  const c = ok(setup).config.cpSubsystem;
  assert.deepEqual([c.cpMemberCount, c.groupSize, c.sessionTimeToLiveSeconds, c.failOnIndeterminateOperationState, c.persistenceEnabled, c.baseDir], [5, 5, 60, true, true, 'raft']);
  assert.equal(c.raftAlgorithm.appendRequestBackoffTimeoutInMillis, 50);
  assert.deepEqual(c.semaphores, [{ name: 'permits', jdkCompatible: true, initialPermits: 3 }]);
  assert.deepEqual(c.locks, [{ name: 'leader', lockAcquireLimit: 1 }]);
  const text = printed(setup);
  assert.match(text, /<fenced-lock name="leader">/);
  const again = ok({ files: { '/p/printed.xml': text }, argv: ['--config', '/p/printed.xml'] }).config;
  assert.deepEqual(again.cpSubsystem, c);
});

test('cp-subsystem: GRID_CPSUBSYSTEM_* variables override, named semaphores and locks included', () => {
  const c = ok({
    env: {
      GRID_CPSUBSYSTEM_CPMEMBERCOUNT: '3',
      GRID_CPSUBSYSTEM_SESSIONTIMETOLIVESECONDS: '120',
      GRID_CPSUBSYSTEM_RAFTALGORITHM_LEADERELECTIONTIMEOUTINMILLIS: '3000',
      GRID_CPSUBSYSTEM_SEMAPHORES_SEMAPHORE_PERMITS_INITIALPERMITS: '2',
      GRID_CPSUBSYSTEM_LOCKS_FENCEDLOCK_LEADER_LOCKACQUIRELIMIT: '1',
    },
  }).config.cpSubsystem;
  assert.deepEqual([c.cpMemberCount, c.groupSize, c.sessionTimeToLiveSeconds, c.raftAlgorithm.leaderElectionTimeoutInMillis], [3, 3, 120, 3000]);
  assert.deepEqual(c.semaphores, [{ name: 'permits', jdkCompatible: false, initialPermits: 2 }]);
  assert.deepEqual(c.locks, [{ name: 'leader', lockAcquireLimit: 1 }]);
  assert.match(fail({ env: { GRID_CPSUBSYSTEM_RAFTALGORITHM_LEADERELECTIONTIMEOUTINMILLIS: '0' } }), /GRID_CPSUBSYSTEM_RAFTALGORITHM_LEADERELECTIONTIMEOUTINMILLIS/);
});

test('cp-subsystem: the relations between values are checked at load', () => {
  assert.match(failXml('<cp-subsystem><session-time-to-live-seconds>5</session-time-to-live-seconds></cp-subsystem>'), /session-time-to-live-seconds \(5\) must be greater than session-heartbeat-interval-seconds \(5\)/);
  assert.match(failXml('<cp-subsystem><missing-cp-member-auto-removal-seconds>100</missing-cp-member-auto-removal-seconds></cp-subsystem>'), /must not exceed missing-cp-member-auto-removal-seconds \(100\)/);
  assert.match(
    failXml('<cp-subsystem><raft-algorithm><leader-heartbeat-period-in-millis>10000</leader-heartbeat-period-in-millis></raft-algorithm></cp-subsystem>'),
    /leader-heartbeat-period-in-millis \(10000\) must be less than leader-election-timeout-in-millis × max-missed-leader-heartbeat-count \(10000\)/,
  );
  assert.match(failXml('<cp-subsystem><semaphores><semaphore name="a"/><semaphore name="a"/></semaphores></cp-subsystem>'), /name a is given twice/);
  assert.match(failXml('<cp-subsystem><raft-algorithm><append-request-max-entry-count>0</append-request-max-entry-count></raft-algorithm></cp-subsystem>'), /append-request-max-entry-count/);
});
