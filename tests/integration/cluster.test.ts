// Real processes forming a cluster on loopback (the issue's user story): three members started with
// explicit tcp-ip member lists find each other and every member's /grid/rest/cluster lists the same
// three members (master first, localMember only for itself); an entry written through one member is
// read through the others; kill -9 of a member loses no acknowledged write (backup-count 1) and the
// survivors show two members; SIGTERM hands data off before the member exits. Ports are taken from
// the OS first, then passed to the members. Waits poll conditions with deadlines; no sleeps.
import test from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startMember, type MemberProcess } from '../harness/member-process.js';
import { request } from '../harness/raw-http.js';

async function freePorts(n: number): Promise<number[]> {
  const servers: net.Server[] = [];
  const ports: number[] = [];
  for (let i = 0; i < n; i++) {
    const s = net.createServer();
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    servers.push(s);
    ports.push((s.address() as net.AddressInfo).port);
  }
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

function xml(port: number, peers: readonly number[]): string {
  return `<grid><cluster-name>dev</cluster-name><network><public-address>127.0.0.1</public-address>
  <port auto-increment="false">${port}</port>
  <join><tcp-ip enabled="true"><member-list>${peers.map((p) => `<member>127.0.0.1:${p}</member>`).join('')}</member-list></tcp-ip></join>
  <rest-api enabled="true"><endpoint-group name="DATA" enabled="true"/><endpoint-group name="CLUSTER_WRITE" enabled="true"/></rest-api></network>
  <map name="default"><backup-count>1</backup-count></map></grid>`;
}

async function until<T>(what: string, deadlineMs: number, f: () => Promise<T | null>): Promise<T> {
  const end = Date.now() + deadlineMs;
  let last: unknown = null;
  while (Date.now() < end) {
    try {
      const v = await f();
      if (v !== null) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}${last === null ? '' : `: ${String(last)}`}`);
}

interface ClusterView {
  members: { address: string; localMember: boolean; uuid: string }[];
}

async function clusterOf(port: number): Promise<ClusterView> {
  const r = await request(port, 'GET', '/grid/rest/cluster');
  return JSON.parse(r.body.toString()) as ClusterView;
}

async function sizeIs(ports: readonly number[], n: number): Promise<true | null> {
  for (const p of ports) {
    const v = await clusterOf(p);
    if (v.members.length !== n) return null;
  }
  const h = await request(ports[0] as number, 'GET', '/grid/health/cluster-safe');
  return h.status === 200 ? true : null;
}

test('three members form one cluster; data survives kill -9 and SIGTERM hand-off', { timeout: 120_000 }, async () => {
  const ports = await freePorts(3);
  const members: MemberProcess[] = [];
  try {
    for (const p of ports) members.push(await startMember({ xml: xml(p, ports), args: ['--port', String(p)] }));
    await until('three members everywhere and cluster-safe', 30_000, () => sizeIs(ports, 3));
    const views = await Promise.all(ports.map((p) => clusterOf(p)));
    const first = views[0]!.members.map((m) => m.uuid);
    for (const [i, v] of views.entries()) {
      assert.deepEqual(v.members.map((m) => m.uuid), first, 'the same members in the same order (master first)');
      assert.equal(v.members.filter((m) => m.localMember).length, 1);
      assert.equal(v.members.find((m) => m.localMember)?.address, `[127.0.0.1]:${ports[i]}`);
    }
    assert.match(members[0]!.stdout(), /Members \{size:3, ver:\d+\}/);

    // Writes through member 0, reads through every member.
    const keys = Array.from({ length: 60 }, (_, i) => `key-${i}`);
    for (const k of keys) assert.equal((await request(ports[0]!, 'POST', `/grid/rest/maps/m/${k}`, { body: `value-${k}` })).status, 200);
    for (const p of ports) for (const k of keys) assert.equal((await request(p, 'GET', `/grid/rest/maps/m/${k}`)).body.toString(), `value-${k}`);

    // kill -9 of the last member: the survivors show two members and every key is readable.
    members[2]!.child.kill('SIGKILL');
    await members[2]!.waitForExit();
    await until('two members after kill -9', 20_000, () => sizeIs(ports.slice(0, 2), 2));
    for (const p of ports.slice(0, 2)) for (const k of keys) assert.equal((await request(p, 'GET', `/grid/rest/maps/m/${k}`)).body.toString(), `value-${k}`, `${k} via ${p}`);

    // SIGTERM of member 1 hands its data to member 0 before exiting.
    assert.equal(await members[1]!.stop('SIGTERM', 60_000), 0);
    await until('one member after SIGTERM', 20_000, () => sizeIs(ports.slice(0, 1), 1));
    for (const k of keys) assert.equal((await request(ports[0]!, 'GET', `/grid/rest/maps/m/${k}`)).body.toString(), `value-${k}`, `${k} after hand-off`);
  } finally {
    await Promise.all(members.map((m) => m.stop('SIGKILL', 5000).catch(() => null)));
  }
});

test('two members started at the same instant form one cluster', { timeout: 60_000 }, async () => {
  const ports = await freePorts(2);
  const members = await Promise.all(ports.map((p) => startMember({ xml: xml(p, ports), args: ['--port', String(p)] })));
  try {
    await until('one cluster of two', 30_000, () => sizeIs(ports, 2));
    const a = await clusterOf(ports[0]!);
    const b = await clusterOf(ports[1]!);
    assert.deepEqual(a.members.map((m) => m.uuid), b.members.map((m) => m.uuid));
  } finally {
    await Promise.all(members.map((m) => m.stop('SIGKILL', 5000).catch(() => null)));
  }
});
