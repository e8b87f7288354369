// Management calls on a real 3-member cluster, through every member (issue "every management call
// does what it says on every member"):
//   - node state follows the cluster state on every member, whichever member the change went
//     through; a member that has not joined yet reports STARTING and is not ready;
//   - clusterShutdown through each member (a fresh cluster each time) stops every member with exit
//     status 0 within a bound, and nothing is promoted meanwhile;
//   - SIGTERM in NO_MIGRATION, FROZEN and PASSIVE leaves at once without a hand-off and says so;
//     in FROZEN the departed member's partitions stay unavailable (503 at once) until the cluster is
//     ACTIVE again, and then every acknowledged entry is back; memberShutdown in FROZEN says so in
//     its answer;
//   - a tcp-ip member list posted through one member is applied on every member;
//   - the README's queue poll example on the README's cluster: a waiting poll through one member is
//     answered with an item offered through another.
// Heartbeats are 1 s with a 3 s suspicion here, so departures are noticed quickly; every wait is
// bounded by a deadline.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { freePorts, killAll, memberXml, startClusterMembers, until, waitSettled, type MemberXmlOptions } from '../harness/cluster.js';
import { startMember, type MemberProcess } from '../harness/member-process.js';
import { request } from '../harness/raw-http.js';

const FAST: MemberXmlOptions = { properties: { 'grid.max.no.heartbeat.seconds': 3 } };
const STOP_BOUND_MS = 20_000;

async function startCluster(n: number, options: MemberXmlOptions = FAST): Promise<{ ports: number[]; members: MemberProcess[] }> {
  const ports = await freePorts(n);
  const members = await startClusterMembers(ports, options);
  try {
    await waitSettled(ports, n, 30_000);
  } catch (e) {
    // Left running, the members would keep this test file from ever exiting.
    await killAll(members);
    throw e;
  }
  return { ports, members };
}

const post = (port: number, path: string, body: string): ReturnType<typeof request> => request(port, 'POST', `/grid/rest/management/cluster/${path}`, { body });
const nodeState = async (port: number): Promise<string> => (await request(port, 'GET', '/grid/health/node-state')).json() as string;

async function changeState(port: number, state: string): Promise<void> {
  const r = await post(port, 'changeState', `dev&&${state}`);
  assert.equal(r.status, 200, r.text());
  assert.deepEqual(r.json(), { status: 'success', state });
}

describe('node state on every member', () => {
  let ports: number[] = [];
  let members: MemberProcess[] = [];
  after(() => killAll(members));

  test('follows the cluster state whichever member the change goes through', async () => {
    ({ ports, members } = await startCluster(3));
    const [a, b, c] = ports as [number, number, number];
    for (const p of ports) assert.equal(await nodeState(p), 'ACTIVE');
    await changeState(b, 'passive'); // through a non-master
    for (const p of ports) {
      assert.equal(await nodeState(p), 'PASSIVE', `member ${p}`);
      assert.deepEqual((await post(p, 'state', 'dev&')).json(), { status: 'success', state: 'passive' });
    }
    await changeState(c, 'frozen');
    for (const p of ports) assert.equal(await nodeState(p), 'ACTIVE', `member ${p} in FROZEN`);
    await changeState(a, 'active');
    for (const p of ports) assert.equal(await nodeState(p), 'ACTIVE');
    assert.match(members[1]?.stdout() ?? '', /cluster state change to PASSIVE requested by 'dev' from 127\.0\.0\.1/);
    assert.match(members[0]?.stdout() ?? '', /cluster state changed from ACTIVE to PASSIVE \(a change made through/);
  });

  test('a member that cannot join yet reports STARTING and is not ready, then ACTIVE once admitted', async () => {
    const [a] = ports as [number];
    await changeState(a, 'frozen'); // FROZEN admits no new member
    const [port] = await freePorts(1);
    const joiner = await startMember({ xml: memberXml(port as number, ports, FAST), args: ['--port', String(port)] });
    members.push(joiner);
    await joiner.waitForOutput(/no new members are admitted|FROZEN/, 15_000).catch(() => null);
    assert.equal(await nodeState(port as number), 'STARTING');
    assert.equal((await request(port as number, 'GET', '/grid/health/ready')).status, 503);
    assert.equal(((await request(port as number, 'GET', '/grid/health')).json() as { nodeState: string }).nodeState, 'STARTING');
    await changeState(a, 'active');
    await waitSettled([...ports, port as number], 4, 30_000);
    assert.equal(await nodeState(port as number), 'ACTIVE');
    assert.equal((await request(port as number, 'GET', '/grid/health/ready')).status, 200);
  });
});

describe('tcp-ip member list', () => {
  test('a list posted through one member is applied on every member', async () => {
    const { ports, members } = await startCluster(3);
    try {
      const list = ports.map((p) => `127.0.0.1:${p}`).concat('127.0.0.1:1');
      const r = await request(ports[1] as number, 'POST', '/grid/rest/config/tcp-ip/member-list', { body: `dev&&${list.join(',')}` });
      assert.equal(r.status, 200, r.text());
      for (const p of ports) {
        await until(`member ${p} has the new list`, 10_000, async () => {
          const got = (await request(p, 'GET', '/grid/rest/config/tcp-ip/member-list')).json() as { 'member-list': string[] };
          return JSON.stringify(got['member-list']) === JSON.stringify(list) ? true : null;
        });
      }
      assert.match(members[0]?.stdout() ?? '', /tcp-ip member list set to .*127\.0\.0\.1:1 \(through 127\.0\.0\.1:/);
    } finally {
      await killAll(members);
    }
  });
});

describe('clusterShutdown through each member', () => {
  for (const through of [0, 1, 2]) {
    test(`through member ${through + 1} of 3: every member exits 0, nothing promoted`, async () => {
      const { ports, members } = await startCluster(3);
      try {
        for (let i = 0; i < 50; i++) await request(ports[i % 3] as number, 'POST', `/grid/rest/maps/m/k${i}`, { body: `v${i}` });
        const r = await post(ports[through] as number, 'clusterShutdown', 'dev&');
        assert.deepEqual(r.json(), { status: 'success' });
        const codes = await Promise.all(members.map((m) => m.waitForExit(STOP_BOUND_MS)));
        assert.deepEqual(codes, [0, 0, 0], members.map((m) => m.stdout().slice(-1500)).join('\n----\n'));
        for (const m of members) {
          const out = m.stdout();
          const from = out.indexOf('clusterShutdown');
          assert.ok(from >= 0, 'each member logs the clusterShutdown');
          assert.doesNotMatch(out.slice(from), /promoted backups/, 'nothing promoted during the shutdown');
          assert.match(out, /stopped/);
        }
        assert.match(members[through]?.stdout() ?? '', /every other member acknowledged/);
      } finally {
        await killAll(members);
      }
    });
  }
});

describe('leaving when the cluster state forbids migrations', () => {
  for (const state of ['no_migration', 'frozen', 'passive']) {
    test(`SIGTERM in ${state.toUpperCase()}: leaves at once without a hand-off and says so`, async () => {
      const { ports, members } = await startCluster(3);
      try {
        for (let i = 0; i < 60; i++) assert.equal((await request(ports[i % 3] as number, 'POST', `/grid/rest/maps/m/k${i}`, { body: `v${i}` })).status, 200);
        await changeState(ports[0] as number, state);
        const victim = members[2] as MemberProcess;
        const started = Date.now();
        assert.equal(await victim.stop('SIGTERM', STOP_BOUND_MS), 0);
        const tookMs = Date.now() - started;
        assert.match(victim.stdout(), new RegExp(`the cluster state ${state.toUpperCase()} forbids migrations; .*: leaving without handing replicas off`));
        assert.ok(tookMs < 15_000, `stopped in ${tookMs} ms`);
        const rest = ports.slice(0, 2);
        await until('the two others list 2 members', 20_000, async () => {
          for (const p of rest) if (((await request(p, 'GET', '/grid/rest/cluster')).json() as { members: unknown[] }).members.length !== 2) return null;
          return true;
        });
        if (state === 'frozen') {
          // Some keys live in partitions the departed member owned: refused at once, not after the call timeout.
          let refused = 0;
          for (let i = 0; i < 60; i++) {
            const r = await request(rest[i % 2] as number, 'GET', `/grid/rest/maps/m/k${i}`);
            if (r.status === 503) {
              refused++;
              assert.match(r.headers['grid-error'] ?? '', /unavailable: its owner left while the cluster is FROZEN/);
            } else assert.equal(r.text(), `v${i}`);
          }
          assert.ok(refused > 0, 'the departed owner’s partitions are unavailable in FROZEN');
          assert.equal((await request(rest[0] as number, 'GET', '/grid/health/cluster-safe')).status, 503);
        }
        await changeState(rest[1] as number, 'active');
        await waitSettled(rest, 2, 30_000);
        for (let i = 0; i < 60; i++) {
          const r = await request(rest[i % 2] as number, 'GET', `/grid/rest/maps/m/k${i}`);
          assert.equal(r.text(), `v${i}`, `k${i} after the state is ACTIVE again`);
        }
      } finally {
        await killAll(members);
      }
    });
  }

  test('memberShutdown in FROZEN answers success with a message, and the member stops at once', async () => {
    const { ports, members } = await startCluster(2);
    try {
      await changeState(ports[0] as number, 'frozen');
      const r = await post(ports[1] as number, 'memberShutdown', 'dev&');
      assert.equal(r.status, 200);
      const body = r.json() as { status: string; message: string };
      assert.equal(body.status, 'success');
      assert.match(body.message, /the cluster state FROZEN forbids migrations; .*: this member stops without handing its replicas off/);
      assert.equal(await members[1]?.waitForExit(STOP_BOUND_MS), 0);
    } finally {
      await killAll(members);
    }
  });
});

describe("the README's queue poll example on the README's cluster", () => {
  test('a waiting poll through one member gets the item offered through another; no 500', async () => {
    const { ports, members } = await startCluster(3, {});
    try {
      const [a, b, c] = ports as [number, number, number];
      // README: curl -X POST --data job-1 …/queues/jobs; curl -X DELETE …/queues/jobs/10
      assert.equal((await request(a, 'POST', '/grid/rest/queues/jobs', { body: 'job-1' })).status, 200);
      for (const p of ports) {
        const polled = await request(p, 'DELETE', '/grid/rest/queues/jobs/10');
        if (polled.status === 200) {
          assert.equal(polled.text(), 'job-1');
          break;
        }
        assert.equal(polled.status, 204);
      }
      // Waiting polls through every member, each answered by an offer made through another.
      for (const [poller, offerer] of [[a, b], [b, c], [c, a]] as const) {
        const waiting = request(poller, 'DELETE', '/grid/rest/queues/jobs/10');
        await new Promise((r) => setTimeout(r, 300));
        assert.equal((await request(offerer, 'POST', '/grid/rest/queues/jobs', { body: `job-${poller}` })).status, 200);
        const r = await waiting;
        assert.equal(r.status, 200, `poll through ${poller}: ${r.statusLine}`);
        assert.equal(r.text(), `job-${poller}`);
      }
      assert.equal((await request(b, 'GET', '/grid/rest/queues/jobs/size')).text(), '0');
    } finally {
      await killAll(members);
    }
  });
});
