// Real processes forming a cluster on loopback (the user story): three members started with
// explicit tcp-ip member lists find each other and every member's /grid/rest/cluster lists the same
// three members (master first, localMember only for itself); an entry written through one member is
// read through the others; kill -9 of a member loses no acknowledged write (backup-count 1) and the
// survivors show two members; SIGTERM hands data off before the member exits. Ports are taken from
// the OS first, then passed to the members. Waits poll conditions with deadlines; no sleeps.
import test from 'node:test';
import assert from 'node:assert/strict';
import type { MemberProcess } from '../harness/member-process.js';
import { request } from '../harness/raw-http.js';
import { clusterOf, freePorts, startClusterMember, until, sizeIs as sameSize } from '../harness/cluster.js';

/** Every member lists `n` members and the first is cluster-safe. */
async function sizeIs(ports: readonly number[], n: number): Promise<true | null> {
  if ((await sameSize(ports, n)) === null) return null;
  const h = await request(ports[0] as number, 'GET', '/grid/health/cluster-safe');
  return h.status === 200 ? true : null;
}

test('three members form one cluster; data survives kill -9 and SIGTERM hand-off', { timeout: 120_000 }, async () => {
  const ports = await freePorts(3);
  const members: MemberProcess[] = [];
  try {
    for (const p of ports) members.push(await startClusterMember(p, ports));
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
  const members = await Promise.all(ports.map((p) => startClusterMember(p, ports)));
  try {
    await until('one cluster of two', 30_000, () => sizeIs(ports, 2));
    const a = await clusterOf(ports[0]!);
    const b = await clusterOf(ports[1]!);
    assert.deepEqual(a.members.map((m) => m.uuid), b.members.map((m) => m.uuid));
  } finally {
    await Promise.all(members.map((m) => m.stop('SIGKILL', 5000).catch(() => null)));
  }
});
