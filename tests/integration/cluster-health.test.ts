// Checks the cluster-information and health calls (docs/rest.md "Cluster information", "Health") of a
// real member with REST on and only the default groups (CLUSTER_READ, HEALTH_CHECK): the member list
// (real UUID, localMember, `[host]:port`, version), connection counts that follow open HTTP and
// member-protocol connections, instance name, cluster version, every health endpoint with GET and
// the HEAD headers, 404 under /grid/health, the metrics counters, and that the other groups are off.
// How: raw sockets; counts are polled with deadlines since a closed socket is seen by the member a
// moment after the client closes it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMember, type MemberProcess } from '../harness/member-process.js';
import { request, type RawResponse } from '../harness/raw-http.js';
import { Connection, exchangeRaw, metrics, waitFor } from '../harness/connection.js';
import { PREAMBLE } from '../../src/cluster/protocol/frame.js';

interface ClusterBody {
  members: { address: string; liteMember: boolean; localMember: boolean; uuid: string; memberVersion: string }[];
  connectionCount: number;
  allConnectionCount: number;
}

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let member: MemberProcess;
let port: number;

async function cluster(): Promise<ClusterBody> {
  const r = await request(port, 'GET', '/grid/rest/cluster');
  assert.equal(r.status, 200);
  return r.json() as ClusterBody;
}

function assertJson(r: RawResponse, body: string): void {
  assert.equal(r.statusLine, 'HTTP/1.1 200 OK');
  assert.equal(r.headers['content-type'], 'application/json');
  assert.equal(r.headers['content-length'], String(Buffer.byteLength(body)));
  assert.equal(r.text(), body);
}

before(async () => {
  member = await startMember({ args: ['--rest', '--instance-name', 'health-test-member', '--public-address', '127.0.0.1'] });
  port = member.port;
});

after(async () => {
  assert.equal(await member.stop(), 0);
});

describe('cluster information', () => {
  test('GET /grid/rest/cluster lists this member alone, in the documented compact shape', async () => {
    const r = await request(port, 'GET', '/grid/rest/cluster');
    assert.equal(r.statusLine, 'HTTP/1.1 200 OK');
    assert.equal(r.headers['content-type'], 'application/json');
    const body = r.json() as ClusterBody;
    assert.equal(r.text(), JSON.stringify(body), 'compact JSON');
    assert.deepEqual(Object.keys(body), ['members', 'connectionCount', 'allConnectionCount']);
    assert.equal(body.members.length, 1);
    const me = body.members[0]!;
    assert.deepEqual(Object.keys(me), ['address', 'liteMember', 'localMember', 'uuid', 'memberVersion']);
    assert.equal(me.address, `[127.0.0.1]:${port}`);
    assert.equal(me.liteMember, false);
    assert.equal(me.localMember, true);
    assert.match(me.uuid, UUID_V4);
    assert.equal(me.memberVersion, '0.1.0');
    // The same UUID as the start-up member list.
    assert.match(member.stdout(), new RegExp(`Member \\[127\\.0\\.0\\.1\\]:${port} - ${me.uuid} this`));
    assert.equal(body.connectionCount, 1, 'only this request is connected');
    assert.equal(body.allConnectionCount, 1);
  });

  test('connectionCount follows open HTTP connections; allConnectionCount adds member-protocol ones', async () => {
    // Each count is read over a new connection, so it includes the asking connection itself; a
    // connection closed by a client is seen by the member a moment later, hence the polling.
    const counts = async (http: number, all: number): Promise<void> => {
      await waitFor(async () => {
        const now = await cluster();
        return now.connectionCount === http && now.allConnectionCount === all;
      }, `connectionCount ${http} and allConnectionCount ${all}`, 5000);
    };
    await counts(1, 1);
    const extra: Connection[] = [];
    for (let i = 0; i < 3; i++) {
      const c = await Connection.open(port);
      c.send('GET', '/grid/health');
      await c.responses(1);
      extra.push(c);
    }
    await counts(4, 4);

    // A member-protocol connection that has sent its preamble but no handshake yet stays open a while.
    const peer = await Connection.open(port);
    peer.write(PREAMBLE);
    await counts(4, 5);
    peer.destroy();
    await counts(4, 4);

    for (const c of extra) c.destroy();
    await counts(1, 1);
  });

  test('GET /grid/rest/instance answers the instance name', async () => {
    assertJson(await request(port, 'GET', '/grid/rest/instance'), '{"name":"health-test-member"}');
  });

  test('GET /grid/rest/management/cluster/version answers the cluster version major.minor', async () => {
    assertJson(await request(port, 'GET', '/grid/rest/management/cluster/version'), '{"status":"success","version":"0.1"}');
  });

  test('GET /grid/rest/license answers OPEN_SOURCE', async () => {
    assertJson(await request(port, 'GET', '/grid/rest/license'), '{"licenseInfo":{"type":"OPEN_SOURCE"}}');
  });

  test('a generated instance name is grid- plus hex and differs per process', async () => {
    const other = await startMember({ args: ['--rest'] });
    try {
      const name = ((await request(other.port, 'GET', '/grid/rest/instance')).json() as { name: string }).name;
      assert.match(name, /^grid-[0-9a-f]+$/);
      const uuid = ((await request(other.port, 'GET', '/grid/rest/cluster')).json() as ClusterBody).members[0]!.uuid;
      assert.notEqual(uuid, (await cluster()).members[0]!.uuid, 'each process has its own UUID');
    } finally {
      await other.stop();
    }
  });
});

describe('health', () => {
  test('GET /grid/health answers the documented object', async () => {
    assertJson(
      await request(port, 'GET', '/grid/health'),
      '{"nodeState":"ACTIVE","clusterState":"ACTIVE","clusterSafe":true,"migrationQueueSize":0,"clusterSize":1}',
    );
  });

  test('HEAD /grid/health answers 200 empty with the Grid-* headers', async () => {
    const conn = await Connection.open(port);
    conn.send('HEAD', '/grid/health');
    conn.send('GET', '/grid/health/cluster-size');
    const [head, next] = await conn.responses(2);
    conn.destroy();
    assert.equal(head!.statusLine, 'HTTP/1.1 200 OK');
    assert.equal(head!.headers['content-length'], '0');
    assert.equal(head!.headers['grid-nodestate'], 'ACTIVE');
    assert.equal(head!.headers['grid-clusterstate'], 'ACTIVE');
    assert.equal(head!.headers['grid-clustersafe'], 'true');
    assert.equal(head!.headers['grid-migrationqueuesize'], '0');
    assert.equal(head!.headers['grid-clustersize'], '1');
    assert.equal(next!.text(), '1', 'no body bytes followed the HEAD answer');
  });

  test('the single-value health endpoints', async () => {
    assertJson(await request(port, 'GET', '/grid/health/node-state'), '"ACTIVE"');
    assertJson(await request(port, 'GET', '/grid/health/cluster-state'), '"ACTIVE"');
    assertJson(await request(port, 'GET', '/grid/health/migration-queue-size'), '0');
    assertJson(await request(port, 'GET', '/grid/health/cluster-size'), '1');
    for (const path of ['/grid/health/cluster-safe', '/grid/health/ready']) {
      const r = await request(port, 'GET', path);
      assert.equal(r.statusLine, 'HTTP/1.1 200 OK', path);
      assert.equal(r.headers['content-length'], '0', path);
      assert.equal(r.body.length, 0, path);
    }
  });

  test('anything else under /grid/health is 404', async () => {
    for (const path of ['/grid/health/nope', '/grid/health/node-state/extra', '/grid/health/Node-State', '/grid/health/ready/']) {
      const r = await request(port, 'GET', path);
      assert.equal(r.statusLine, 'HTTP/1.1 404 Not Found', path);
      assert.equal(r.headers['content-length'], '0', path);
    }
  });

  test('the query string is ignored', async () => {
    assertJson(await request(port, 'GET', '/grid/health/cluster-size?verbose=1'), '1');
  });
});

describe('metrics and groups', () => {
  test('GET /grid/rest/metrics: numeric counters at the top level that move with the traffic', async () => {
    const r = await request(port, 'GET', '/grid/rest/metrics');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/json');
    const first = r.json() as Record<string, unknown>;
    // Every top-level value is a number except the states and the nested figures (docs/operations.md "Metrics").
    const nested = new Set(['nodeState', 'clusterState', 'perMap', 'perQueue', 'requestsByKind', 'gc', 'wan', 'cpGroups', 'cpCallsByStructure']);
    for (const [k, v] of Object.entries(first)) if (!nested.has(k)) assert.equal(typeof v, 'number', `${k} is a number`);
    for (const k of ['mapEntries', 'queues', 'waitingPolls', 'httpConnections', 'requests', 'connectionsRefused']) assert.ok(k in first, `${k} present`);
    const refused = first.connectionsRefused as number;
    const requests = first.requests as number;
    const closed = await exchangeRaw(port, Buffer.from([0x00, 0x01, 0x02]));
    assert.equal(closed.closed, true);
    const after = await metrics(port);
    assert.equal(after.connectionsRefused, refused + 1, 'the garbage connection was counted');
    assert.equal(after.requests, requests + 1, 'one more request (this one)');
  });

  test('the groups that are off by default answer 403 naming them', async () => {
    const cases: [string, string, string][] = [
      ['GET', '/grid/rest/maps/m/k', 'DATA'],
      ['DELETE', '/grid/rest/queues/q/0', 'DATA'],
      ['POST', '/grid/rest/management/cluster/memberShutdown', 'CLUSTER_WRITE'],
      ['GET', '/grid/rest/wan/sync/progress/x', 'WAN'],
      ['GET', '/grid/rest/cp-subsystem/groups', 'CP'],
      ['POST', '/grid/rest/management/cluster/hotBackup', 'PERSISTENCE'],
    ];
    for (const [method, path, group] of cases) {
      const r = await request(port, method, path, method === 'POST' ? { body: 'dev&' } : {});
      assert.equal(r.statusLine, 'HTTP/1.1 403 Forbidden', path);
      assert.equal(r.text(), `{"status":"fail","message":"REST endpoint group ${group} is not enabled"}`);
    }
    assert.equal((await request(port, 'GET', '/grid/health')).status, 200, 'memberShutdown did not run');
  });

  // node-state STARTING cannot be seen from outside (the member binds its port and turns ACTIVE in
  // the same tick); tests/unit/local-member.test.ts checks the state machine directly.
});
