// Checks the management, WAN and CP calls (docs/rest.md "Management calls", "WAN and CP") against
// real member processes: cluster state and its changes (PASSIVE refuses data writes with 503 and
// still serves reads), version, nodes, log level, tcp-ip member list, license, the persistence calls,
// parameter-count 400s and credential 403s on every POST in the documented order, Basic credentials,
// WAN 404/501, CP 503 (credentials first when security is on), memberShutdown and clusterShutdown stopping the process with exit status 0,
// and security on: realm users, wrong passwords, GET endpoints that need a Basic header, the audit log.
// How: raw HTTP against one member with every group on (security off), one with security on, and a
// third stopped by memberShutdown; each stop is observed as the process exiting, with a deadline.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMember, type MemberProcess, secureMemberXml } from '../harness/member-process.js';
import { request, type RawResponse } from '../harness/raw-http.js';

const ALL_GROUPS = ['--rest-groups', 'DATA,CLUSTER_WRITE,WAN,CP,PERSISTENCE'];

const XML_TCP = `<grid>
  <network>
    <join><tcp-ip enabled="true"><member-list><member>127.0.0.1:5701</member><member>10.0.0.9</member></member-list></tcp-ip></join>
    <rest-api enabled="true"/>
  </network>
</grid>`;

const PASSWORD = 'pw-Zq7-unique';
const XML_SECURE = secureMemberXml(PASSWORD);

/** Every POST of the management, WAN and CP areas with the parameter count the docs give (credentials included). */
const COUNTED_POSTS: [string, number][] = [
  ['/grid/rest/management/cluster/state', 2],
  ['/grid/rest/management/cluster/changeState', 3],
  ['/grid/rest/management/cluster/version', 3],
  ['/grid/rest/management/cluster/clusterShutdown', 2],
  ['/grid/rest/management/cluster/memberShutdown', 2],
  ['/grid/rest/management/cluster/nodes', 2],
  ['/grid/rest/management/cluster/forceStart', 2],
  ['/grid/rest/management/cluster/partialStart', 2],
  ['/grid/rest/management/cluster/backup', 2],
  ['/grid/rest/management/cluster/backupInterrupt', 2],
  ['/grid/rest/management/cluster/hotBackup', 2],
  ['/grid/rest/management/cluster/hotBackupInterrupt', 2],
  ['/grid/rest/log-level', 3],
  ['/grid/rest/log-level/reset', 2],
  ['/grid/rest/license', 3],
  ['/grid/rest/config/tcp-ip/member-list', 3],
  ['/grid/rest/wan/clearWanQueues', 4],
  ['/grid/rest/wan/pausePublisher', 4],
  ['/grid/rest/wan/resumePublisher', 4],
  ['/grid/rest/wan/stopPublisher', 4],
  ['/grid/rest/wan/sync/map', 5],
  ['/grid/rest/wan/sync/allmaps', 4],
  ['/grid/rest/wan/consistencyCheck/map', 5],
  ['/grid/rest/wan/addWanConfig', 3],
];

const CP_POSTS = [
  '/grid/rest/cp-subsystem/members',
  '/grid/rest/cp-subsystem/members/0f8fad5b-d9cb-469f-a165-70867728950e/remove',
  '/grid/rest/cp-subsystem/groups/default/remove',
  '/grid/rest/cp-subsystem/groups/default/sessions/1/remove',
  '/grid/rest/cp-subsystem/reset',
];
const CP_GETS = ['/grid/rest/cp-subsystem/groups', '/grid/rest/cp-subsystem/groups/default', '/grid/rest/cp-subsystem/groups/default/sessions', '/grid/rest/cp-subsystem/members', '/grid/rest/cp-subsystem/members/local'];

function basic(user: string, password: string): Record<string, string> {
  return { Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` };
}

function assertJson(r: RawResponse, status: string, body: unknown): void {
  assert.equal(r.statusLine, status);
  assert.equal(r.headers['content-type'], 'application/json');
  assert.equal(r.headers['content-length'], String(r.body.length));
  assert.deepEqual(r.json(), body);
  assert.equal(r.text(), JSON.stringify(body), 'compact JSON in the documented key order');
}

const OK = 'HTTP/1.1 200 OK';
const BAD = 'HTTP/1.1 400 Bad Request';
const FORBIDDEN = 'HTTP/1.1 403 Forbidden';
const UNAUTHENTICATED = { status: 'fail', message: 'unauthenticated' };

describe('security off (cluster name as credentials)', () => {
  let member: MemberProcess;
  let port: number;
  const post = (path: string, body: string, headers: Record<string, string> = {}): Promise<RawResponse> =>
    request(port, 'POST', path, { body, headers });

  before(async () => {
    member = await startMember({ args: ALL_GROUPS, xml: XML_TCP });
    port = member.port;
    // Its join addresses do not answer: it becomes master of a cluster of one after the claim delay.
    await member.waitForOutput(/master of a new cluster/, 15_000);
  });
  after(async () => {
    await member.stop('SIGKILL');
  });

  test('every management and WAN POST with body `dummy` is 400 "expects at least N parameters"', async () => {
    for (const [path, n] of COUNTED_POSTS) {
      assertJson(await post(path, 'dummy'), BAD, { status: 'fail', message: `This endpoint expects at least ${n} parameters` });
    }
    // Without any body at all, too.
    assertJson(await request(port, 'POST', '/grid/rest/management/cluster/state'), BAD, { status: 'fail', message: 'This endpoint expects at least 2 parameters' });
    assert.equal((await request(port, 'GET', '/grid/health')).status, 200, 'no shutdown ran');
  });

  test('every management and WAN POST with a wrong cluster name (`dummy&&&&`) is 403 unauthenticated', async () => {
    for (const [path] of COUNTED_POSTS) assertJson(await post(path, 'dummy&&&&'), FORBIDDEN, UNAUTHENTICATED);
    assertJson(await post('/grid/rest/management/cluster/state', 'Dev&'), FORBIDDEN, UNAUTHENTICATED);
    assertJson(await post('/grid/rest/management/cluster/state', 'dev%20&'), FORBIDDEN, UNAUTHENTICATED);
    assert.equal((await request(port, 'GET', '/grid/health')).status, 200, 'no shutdown ran');
  });

  test('CP calls answer 503 "CP subsystem is not enabled", whatever the body (security off asks for nothing)', async () => {
    for (const path of CP_POSTS) {
      for (const body of ['dummy', 'dummy&&&&', 'dev&', '']) assertJson(await post(path, body), 'HTTP/1.1 503 Service Unavailable', { status: 'fail', message: 'CP subsystem is not enabled' });
    }
    for (const path of CP_GETS) assertJson(await request(port, 'GET', path), 'HTTP/1.1 503 Service Unavailable', { status: 'fail', message: 'CP subsystem is not enabled' });
  });

  test('state answers the cluster state in lower case; the password is ignored; percent-decoding applies', async () => {
    assertJson(await post('/grid/rest/management/cluster/state', 'dev&'), OK, { status: 'success', state: 'active' });
    assertJson(await post('/grid/rest/management/cluster/state', 'dev&anything'), OK, { status: 'success', state: 'active' });
    assertJson(await post('/grid/rest/management/cluster/state', '%64ev&'), OK, { status: 'success', state: 'active' });
  });

  test('credentials may come in an Authorization: Basic header instead of the body', async () => {
    assertJson(await post('/grid/rest/management/cluster/state', '', basic('dev', '')), OK, { status: 'success', state: 'active' });
    assertJson(await post('/grid/rest/management/cluster/state', '', basic('nope', '')), FORBIDDEN, UNAUTHENTICATED);
    assertJson(await post('/grid/rest/management/cluster/version', '0.1', basic('dev', 'x')), OK, { status: 'success', version: '0.1' });
    assert.equal((await post('/grid/rest/management/cluster/version', '9.9', basic('dev', 'x'))).statusLine, BAD, 'the body holds only the remaining parameters');
  });

  test('changeState: frozen, the same state again fails, unknown and in_transition are 400, back to active', async () => {
    const change = (state: string): Promise<RawResponse> => post('/grid/rest/management/cluster/changeState', `dev&&${state}`);
    assertJson(await change('frozen'), OK, { status: 'success', state: 'frozen' });
    assertJson(await post('/grid/rest/management/cluster/state', 'dev&'), OK, { status: 'success', state: 'frozen' });
    assert.equal((await request(port, 'GET', '/grid/health/cluster-state')).text(), '"FROZEN"');
    assertJson(await change('FROZEN'), OK, { status: 'fail', state: 'frozen' });
    for (const bad of ['bogus', 'in_transition', 'IN_TRANSITION', '']) {
      const r = await change(bad);
      assert.equal(r.statusLine, BAD, `changeState ${JSON.stringify(bad)}`);
      assert.equal((r.json() as { status: string }).status, 'fail');
    }
    assertJson(await change('No_Migration'), OK, { status: 'success', state: 'no_migration' });
    assertJson(await change('Active'), OK, { status: 'success', state: 'active' });
    assert.equal((await request(port, 'GET', '/grid/health/cluster-state')).text(), '"ACTIVE"');
  });

  test('PASSIVE refuses data writes with 503 + Grid-Error + Retry-After, still serves reads; ACTIVE again writes', async () => {
    assert.equal((await post('/grid/rest/maps/pm/k', 'before')).status, 200);
    assert.equal((await post('/grid/rest/queues/pq', 'item')).status, 200);
    assertJson(await post('/grid/rest/management/cluster/changeState', 'dev&&passive'), OK, { status: 'success', state: 'passive' });
    const health = (await request(port, 'GET', '/grid/health')).json() as { nodeState: string; clusterState: string };
    assert.equal(health.clusterState, 'PASSIVE');
    assert.equal((await request(port, 'GET', '/grid/health/node-state')).text(), '"PASSIVE"');

    for (const [method, path] of [['POST', '/grid/rest/maps/pm/k'], ['PUT', '/grid/rest/maps/pm/k2'], ['DELETE', '/grid/rest/maps/pm/k'], ['DELETE', '/grid/rest/maps/pm'], ['POST', '/grid/rest/queues/pq'], ['DELETE', '/grid/rest/queues/pq/0']] as const) {
      const r = await request(port, method, path, method === 'DELETE' ? {} : { body: 'x' });
      assert.equal(r.statusLine, 'HTTP/1.1 503 Service Unavailable', `${method} ${path}`);
      assert.match(r.headers['grid-error'] ?? '', /^cluster is PASSIVE/, `${method} ${path}`);
      assert.equal(r.headers['retry-after'], '5');
      assert.equal(r.headers['content-length'], '0');
      assert.equal(r.body.length, 0);
    }
    const read = await request(port, 'GET', '/grid/rest/maps/pm/k');
    assert.equal(read.status, 200);
    assert.equal(read.text(), 'before', 'the refused writes changed nothing');
    assert.equal((await request(port, 'GET', '/grid/rest/queues/pq/size')).text(), '1');
    assert.equal((await request(port, 'GET', '/grid/rest/instance')).status, 200, 'information calls work');

    assertJson(await post('/grid/rest/management/cluster/changeState', 'dev&&active'), OK, { status: 'success', state: 'active' });
    assert.equal((await request(port, 'GET', '/grid/health/node-state')).text(), '"ACTIVE"');
    assert.equal((await post('/grid/rest/maps/pm/k', 'after')).status, 200);
    assert.equal((await request(port, 'GET', '/grid/rest/maps/pm/k')).text(), 'after');
    assert.equal((await request(port, 'DELETE', '/grid/rest/queues/pq/0')).text(), 'item');
  });

  test('version: the running cluster version succeeds, any other is 400', async () => {
    assertJson(await post('/grid/rest/management/cluster/version', 'dev&&0.1'), OK, { status: 'success', version: '0.1' });
    for (const v of ['9.9', '0.2', '1.0', 'x']) {
      const r = await post('/grid/rest/management/cluster/version', `dev&&${v}`);
      assert.equal(r.statusLine, BAD, v);
      assert.equal((r.json() as { status: string }).status, 'fail');
    }
  });

  test('nodes lists this member, the product and the runtime version', async () => {
    const info = (await request(port, 'GET', '/grid/rest/cluster')).json() as { members: { address: string; uuid: string }[] };
    const me = info.members[0]!;
    assertJson(await post('/grid/rest/management/cluster/nodes', 'dev&'), OK, {
      status: 'success',
      response: `[Member ${me.address} - ${me.uuid} this]\nGrid 0.1.0\nNode.js ${process.versions.node}`,
    });
  });

  test('log level: null until set, set (case-insensitive), visible in effect, invalid is 400, reset', async () => {
    assertJson(await request(port, 'GET', '/grid/rest/log-level'), OK, { logLevel: null });
    assertJson(await post('/grid/rest/log-level', 'dev&&fine'), OK, { status: 'success', message: 'log level is changed' });
    assertJson(await request(port, 'GET', '/grid/rest/log-level'), OK, { logLevel: 'FINE' });
    // FINE messages now reach the log: a refused cluster name is logged at FINE.
    assert.equal((await post('/grid/rest/management/cluster/state', 'wrong-name&')).status, 403);
    await member.waitForOutput(/FINE.*wrong cluster name/, 5000);
    const bad = await post('/grid/rest/log-level', 'dev&&LOUD');
    assert.equal(bad.statusLine, BAD);
    const message = (bad.json() as { message: string }).message;
    for (const level of ['OFF', 'SEVERE', 'WARNING', 'INFO', 'CONFIG', 'FINE', 'FINER', 'FINEST']) assert.match(message, new RegExp(`\\b${level}\\b`));
    assertJson(await request(port, 'GET', '/grid/rest/log-level'), OK, { logLevel: 'FINE' });
    assertJson(await post('/grid/rest/log-level/reset', 'dev&'), OK, { status: 'success', message: 'log level is reset' });
    assertJson(await request(port, 'GET', '/grid/rest/log-level'), OK, { logLevel: null });
    assert.equal((await post('/grid/rest/log-level', 'finest', basic('dev', ''))).statusLine, OK);
    assertJson(await request(port, 'GET', '/grid/rest/log-level'), OK, { logLevel: 'FINEST' });
    assertJson(await post('/grid/rest/log-level/reset', '', basic('dev', '')), OK, { status: 'success', message: 'log level is reset' });
  });

  test('tcp-ip member list: read, replaced at run time (split on , ; and space), read back', async () => {
    const r = await request(port, 'GET', '/grid/rest/config/tcp-ip/member-list');
    assert.equal(r.statusLine, OK);
    const before = r.json() as { status: string; 'member-list': string[] };
    assert.equal(before.status, 'success');
    assert.ok(before['member-list'].some((m) => m.startsWith('127.0.0.1')), JSON.stringify(before));
    assert.ok(before['member-list'].some((m) => m.startsWith('10.0.0.9')), JSON.stringify(before));
    const set = await post('/grid/rest/config/tcp-ip/member-list', 'dev&&10.0.0.1:5701,10.0.0.2;10.0.0.3 10.0.0.4:5701-5703');
    assert.equal(set.statusLine, OK);
    const answer = set.json() as { status: string; message: string; 'member-list': string[] };
    assert.deepEqual(Object.keys(answer), ['status', 'message', 'member-list']);
    assert.equal(answer.status, 'success');
    assert.deepEqual(answer['member-list'], ['10.0.0.1:5701', '10.0.0.2', '10.0.0.3', '10.0.0.4:5701-5703']);
    assertJson(await request(port, 'GET', '/grid/rest/config/tcp-ip/member-list'), OK, { status: 'success', 'member-list': ['10.0.0.1:5701', '10.0.0.2', '10.0.0.3', '10.0.0.4:5701-5703'] });
  });

  test('tcp-ip member list: a malformed entry is refused with 400 and the list is unchanged', async () => {
    const before = (await request(port, 'GET', '/grid/rest/config/tcp-ip/member-list')).json() as { 'member-list': string[] };
    const bad = await post('/grid/rest/config/tcp-ip/member-list', 'dev&&10.0.0.7:5701,10.0.0.8:99999');
    assert.equal(bad.statusLine, BAD);
    assert.match((bad.json() as { message: string }).message, /member list entry '10\.0\.0\.8:99999'/);
    const after = (await request(port, 'GET', '/grid/rest/config/tcp-ip/member-list')).json() as { 'member-list': string[] };
    assert.deepEqual(after['member-list'], before['member-list']);
  });

  test('body parameters: `+` is a space only when form-encoded; extra `&` stay inside the last parameter', async () => {
    const form = { 'Content-Type': 'application/x-www-form-urlencoded' };
    const spaced = await post('/grid/rest/config/tcp-ip/member-list', 'dev&&10.0.0.5+10.0.0.6', form);
    assert.deepEqual((spaced.json() as { 'member-list': string[] })['member-list'], ['10.0.0.5', '10.0.0.6']);
    // Not form-encoded: the `+` stays, so the whole text is one entry, and not a valid host.
    const literal = await post('/grid/rest/config/tcp-ip/member-list', 'dev&&10.0.0.5+10.0.0.6');
    assert.equal(literal.statusLine, BAD);
    assert.match((literal.json() as { message: string }).message, /'10\.0\.0\.5\+10\.0\.0\.6'/);
    assertJson(await post('/grid/rest/management/cluster/state', 'dev&', form), OK, { status: 'success', state: 'active' });
    const extra = await post('/grid/rest/log-level', 'dev&&FINE&more');
    assert.equal(extra.statusLine, BAD, 'the level parameter is "FINE&more"');
    assert.match((extra.json() as { message: string }).message, /FINE&more/);
    const malformed = await post('/grid/rest/management/cluster/state', 'dev%zz&');
    assert.equal(malformed.statusLine, BAD, 'a malformed escape in a parameter is 400');
  });

  test('license: GET OPEN_SOURCE; POST authenticates first, then 400 "no license keys"', async () => {
    assertJson(await request(port, 'GET', '/grid/rest/license'), OK, { licenseInfo: { type: 'OPEN_SOURCE' } });
    assertJson(await post('/grid/rest/license', 'dev&&SOME-KEY'), BAD, { status: 'fail', message: 'this member uses no license keys' });
    assertJson(await post('/grid/rest/license', 'nope&&SOME-KEY'), FORBIDDEN, UNAUTHENTICATED);
  });

  test('persistence calls answer "persistence is not enabled"; only hotBackup and hotBackupInterrupt are deprecated', async () => {
    for (const action of ['forceStart', 'partialStart', 'backup', 'backupInterrupt', 'hotBackup', 'hotBackupInterrupt']) {
      const r = await post(`/grid/rest/management/cluster/${action}`, 'dev&');
      assertJson(r, OK, { status: 'fail', message: 'persistence is not enabled' });
      if (action.startsWith('hot')) assert.equal(r.headers.deprecation, 'true', action);
      else assert.equal(r.headers.deprecation, undefined, action);
    }
  });

  test('WAN: unknown replication 404 after authentication, progress 404, addWanConfig names the bad field (400) and adds a scheme', async () => {
    for (const [path] of COUNTED_POSTS.filter(([p]) => p.includes('/wan/') && !p.endsWith('addWanConfig'))) {
      const r = await post(path, 'dev&&to-b&pub-1&mapX');
      assert.equal(r.statusLine, 'HTTP/1.1 404 Not Found', path);
      assert.equal(r.headers['content-type'], 'application/json');
      const body = r.json() as { status: string; message: string };
      assert.equal(body.status, 'fail');
      assert.match(body.message, /to-b/, 'names the unknown replication');
    }
    for (const path of ['/grid/rest/wan/sync/progress/0f8fad5b-d9cb-469f-a165-70867728950e', '/grid/rest/wan/consistencyCheck/0f8fad5b-d9cb-469f-a165-70867728950e']) {
      const r = await request(port, 'GET', path);
      assert.equal(r.statusLine, 'HTTP/1.1 404 Not Found', path);
      assert.equal((r.json() as { status: string }).status, 'fail');
    }
    const bad = await post('/grid/rest/wan/addWanConfig', 'dev&&{"name":"x","batchPublisherConfigs":[]}');
    assert.equal(bad.statusLine, 'HTTP/1.1 400 Bad Request');
    const badBody = bad.json() as { status: string; message: string };
    assert.equal(badBody.status, 'fail');
    assert.match(badBody.message, /batchPublisherConfigs/, 'names the unknown field');
    const add = await post('/grid/rest/wan/addWanConfig', `dev&&${encodeURIComponent('{"name":"x","batchPublishers":[]}')}`);
    assertJson(add, OK, { status: 'success', message: 'WAN configuration added.', addedPublisherIds: [], ignoredPublisherIds: [] });
    assertJson(await post('/grid/rest/wan/addWanConfig', 'nope&&{}'), FORBIDDEN, UNAUTHENTICATED);
  });

  test('memberShutdown answers success first, then the process stops with exit status 0', async () => {
    const r = await post('/grid/rest/management/cluster/memberShutdown', 'dev&');
    assertJson(r, OK, { status: 'success' });
    assert.equal(await member.waitForExit(15_000), 0);
    assert.match(member.stdout(), /stopping: memberShutdown/);
  });
});

describe('clusterShutdown', () => {
  test('clusterShutdown answers success, then the cluster turns PASSIVE and the process exits 0', async () => {
    const m = await startMember({ args: ['--rest-groups', 'CLUSTER_WRITE'] });
    try {
      const r = await request(m.port, 'POST', '/grid/rest/management/cluster/clusterShutdown', { body: 'dev&' });
      assertJson(r, OK, { status: 'success' });
      assert.equal(await m.waitForExit(15_000), 0);
      assert.match(m.stdout(), /stopping: clusterShutdown/);
    } finally {
      await m.stop('SIGKILL');
    }
  });
});

describe('security on (realm users)', () => {
  let member: MemberProcess;
  let port: number;
  const post = (path: string, body: string, headers: Record<string, string> = {}): Promise<RawResponse> =>
    request(port, 'POST', path, { body, headers });

  before(async () => {
    member = await startMember({ args: ['--rest-groups', 'CLUSTER_WRITE,DATA,CP'], xml: XML_SECURE });
    port = member.port;
  });
  after(async () => {
    await member.stop('SIGKILL');
  });

  test('the right user and password succeed; a wrong password, an unknown user or the cluster name are 403', async () => {
    assertJson(await post('/grid/rest/management/cluster/state', `admin&${PASSWORD}`), OK, { status: 'success', state: 'active' });
    assertJson(await post('/grid/rest/management/cluster/state', 'admin&wrong'), FORBIDDEN, UNAUTHENTICATED);
    assertJson(await post('/grid/rest/management/cluster/state', 'admin&'), FORBIDDEN, UNAUTHENTICATED);
    assertJson(await post('/grid/rest/management/cluster/state', `root&${PASSWORD}`), FORBIDDEN, UNAUTHENTICATED);
    assertJson(await post('/grid/rest/management/cluster/state', 'dev&'), FORBIDDEN, UNAUTHENTICATED);
    assertJson(await post('/grid/rest/management/cluster/state', 'member&member-pw'), FORBIDDEN, UNAUTHENTICATED);
    assertJson(await post('/grid/rest/management/cluster/state', '', basic('admin', PASSWORD)), OK, { status: 'success', state: 'active' });
    assertJson(await post('/grid/rest/management/cluster/state', '', basic('admin', 'nope')), FORBIDDEN, UNAUTHENTICATED);
    // Count first, then credentials.
    assertJson(await post('/grid/rest/management/cluster/changeState', `admin&${PASSWORD}`), BAD, { status: 'fail', message: 'This endpoint expects at least 3 parameters' });
  });

  test('GET log-level and GET health/cluster-state need a Basic header; other health calls do not', async () => {
    assertJson(await request(port, 'GET', '/grid/rest/log-level'), FORBIDDEN, UNAUTHENTICATED);
    assertJson(await request(port, 'GET', '/grid/rest/log-level', { headers: basic('admin', 'wrong') }), FORBIDDEN, UNAUTHENTICATED);
    assertJson(await request(port, 'GET', '/grid/rest/log-level', { headers: basic('admin', PASSWORD) }), OK, { logLevel: null });
    assertJson(await request(port, 'GET', '/grid/health/cluster-state'), FORBIDDEN, UNAUTHENTICATED);
    const cs = await request(port, 'GET', '/grid/health/cluster-state', { headers: basic('admin', PASSWORD) });
    assert.equal(cs.status, 200);
    assert.equal(cs.text(), '"ACTIVE"');
    assert.equal((await request(port, 'GET', '/grid/health')).status, 200);
    assert.equal((await request(port, 'GET', '/grid/health/ready')).status, 200);
  });

  test('CP calls check credentials before anything else: POSTs from the body or Basic, GETs from Basic; each attempt is audited', async () => {
    const unavailable = { status: 'fail', message: 'CP subsystem is not enabled' };
    for (const path of CP_POSTS) {
      assertJson(await post(path, 'dummy'), BAD, { status: 'fail', message: 'This endpoint expects at least 2 parameters' });
      assertJson(await post(path, 'admin&wrong'), FORBIDDEN, UNAUTHENTICATED);
      assertJson(await post(path, 'dev&'), FORBIDDEN, UNAUTHENTICATED);
      assertJson(await post(path, '', basic('admin', 'wrong')), FORBIDDEN, UNAUTHENTICATED);
      assertJson(await post(path, `admin&${PASSWORD}`), 'HTTP/1.1 503 Service Unavailable', unavailable);
      assertJson(await post(path, '', basic('admin', PASSWORD)), 'HTTP/1.1 503 Service Unavailable', unavailable);
    }
    for (const path of CP_GETS) {
      assertJson(await request(port, 'GET', path), FORBIDDEN, UNAUTHENTICATED);
      assertJson(await request(port, 'GET', path, { headers: basic('admin', 'wrong') }), FORBIDDEN, UNAUTHENTICATED);
      assertJson(await request(port, 'GET', path, { headers: basic('admin', PASSWORD) }), 'HTTP/1.1 503 Service Unavailable', unavailable);
    }
    assert.equal((await post('/grid/rest/cp-subsystem/reset', 'cpaudit&wrong-cp-pw')).status, 403);
    const line = (await member.waitForOutput(/^.*\[audit\].*cpaudit.*$/m, 5000))[0];
    assert.match(line, /cp-subsystem\/reset/);
    assert.match(line, /fail/);
    assert.doesNotMatch(member.stdout(), /wrong-cp-pw/);
  });

  test('map and queue calls take no credentials', async () => {
    assert.equal((await post('/grid/rest/maps/m/k', 'v')).status, 200);
    assert.equal((await request(port, 'GET', '/grid/rest/maps/m/k')).text(), 'v');
  });

  test('every attempt is audited with user, endpoint, source and outcome, never the password', async () => {
    assert.equal((await post('/grid/rest/management/cluster/state', 'auditme&wrong-audit-pw')).status, 403);
    const line = (await member.waitForOutput(/^.*\[audit\].*auditme.*$/m, 5000))[0];
    assert.match(line, /management\/cluster\/state/);
    assert.match(line, /127\.0\.0\.1/);
    assert.match(line, /fail/);
    assert.doesNotMatch(member.stdout(), /wrong-audit-pw/);
    assert.equal(member.stdout().includes(PASSWORD), false, 'the password never reaches the log');
    assert.match(member.stdout(), /\[audit\].*admin.*success/);
  });

  test('tcp-ip join off: the member list is 400 for GET and (after authentication) POST', async () => {
    assertJson(await request(port, 'GET', '/grid/rest/config/tcp-ip/member-list', { headers: basic('admin', PASSWORD) }), BAD, { status: 'fail', message: 'TCP-IP join mechanism is not enabled in the cluster.' });
    assertJson(await post('/grid/rest/config/tcp-ip/member-list', `admin&${PASSWORD}&10.0.0.1`), BAD, { status: 'fail', message: 'TCP-IP join mechanism is not enabled in the cluster.' });
    assertJson(await post('/grid/rest/config/tcp-ip/member-list', 'admin&bad&10.0.0.1'), FORBIDDEN, UNAUTHENTICATED);
  });

  test('memberShutdown with a wrong password does nothing; with the right one the member exits 0', async () => {
    assertJson(await post('/grid/rest/management/cluster/memberShutdown', 'admin&nope'), FORBIDDEN, UNAUTHENTICATED);
    assert.equal((await request(port, 'GET', '/grid/health')).status, 200);
    assertJson(await post('/grid/rest/management/cluster/memberShutdown', '', basic('admin', PASSWORD)), OK, { status: 'success' });
    assert.equal(await member.waitForExit(15_000), 0);
  });
});
