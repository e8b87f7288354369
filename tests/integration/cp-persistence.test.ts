// CP persistence on real members (spec/cp.md "CP persistence"), three CP members sharing one
// base-dir (each finds its directory by its address):
//   - a CP member killed with kill -9 and restarted on its directory is the same CP member (same CP
//     UUID in the list) and takes part again: with another member then killed, the group of three
//     still has a majority only because the restarted one counts, and calls go on;
//   - every member killed with kill -9 at once and restarted: the counter, the AtomicReference, the
//     CP session and the lock it holds (same fence) are all back;
//   - a malformed identity file stops the member at start, naming the file.
// Every wait is bounded by a deadline.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, readdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { freePorts, killAll, startClusterMember, startClusterMembers, until, waitSettled, type MemberXmlOptions } from '../harness/cluster.js';
import type { MemberProcess } from '../harness/member-process.js';
import { request } from '../harness/raw-http.js';

type Json = Record<string, unknown>;
const post = (port: number, p: string, body = '') => request(port, 'POST', p, { body });
const get = (port: number, p: string) => request(port, 'GET', p);

describe('CP persistence on three real CP members', () => {
  let ports: number[] = [];
  let members: MemberProcess[] = [];
  let baseDir = '';
  let options: MemberXmlOptions = {};

  const start = (port: number): Promise<MemberProcess> => startClusterMember(port, ports, options);
  const restartAt = async (port: number): Promise<void> => {
    const i = members.findIndex((m) => m.port === port);
    members[i] = await start(port);
  };
  const kill9 = async (port: number): Promise<void> => {
    const m = members.find((x) => x.port === port) as MemberProcess;
    m.child.kill('SIGKILL');
    await m.waitForExit(10_000);
  };
  const value = async (port: number): Promise<string | null> => {
    const r = await get(port, '/grid/rest/cp/atomiclongs/orders');
    return r.status === 200 ? r.text() : null;
  };

  before(async () => {
    ports = await freePorts(3);
    baseDir = mkdtempSync(path.join(os.tmpdir(), 'grid-cp-persist-'));
    options = {
      properties: { 'grid.max.no.heartbeat.seconds': 3 },
      cpXml: `<cp-member-count>3</cp-member-count><persistence-enabled>true</persistence-enabled><base-dir>${baseDir}</base-dir><raft-algorithm><leader-election-timeout-in-millis>1000</leader-election-timeout-in-millis><leader-heartbeat-period-in-millis>1000</leader-heartbeat-period-in-millis></raft-algorithm>`,
    };
    members = await startClusterMembers(ports, options);
    await waitSettled(ports, 3, 30_000);
    await until('CP discovery', 30_000, async () => ((await post(ports[0] as number, '/grid/rest/cp/atomiclongs/orders', '10')).status === 200 ? true : null));
  });
  after(async () => {
    await killAll(members);
    rmSync(baseDir, { recursive: true, force: true });
  });

  test('each CP member has its directory under the shared base-dir', async () => {
    const cpMembers = (await get(ports[0] as number, '/grid/rest/cp-subsystem/members')).json() as Json[];
    const dirs = readdirSync(baseDir).sort();
    assert.deepEqual(dirs, cpMembers.map((m) => String(m.uuid)).sort());
    for (const d of dirs) assert.ok(existsSync(path.join(baseDir, d, 'member')), `${d}/member`);
  });

  test('a CP member restarted after kill -9 is the same CP member and counts for the majority again', async () => {
    const before1 = JSON.stringify((await get(ports[0] as number, '/grid/rest/cp-subsystem/members')).json());
    const g = (await get(ports[0] as number, '/grid/rest/cp-subsystem/groups/default')).json() as { leader: { address: string } };
    const leaderPort = Number(g.leader.address.split(':').pop());
    const follower = ports.find((p) => p !== leaderPort) as number;
    await kill9(follower);
    assert.equal((await post(leaderPort, '/grid/rest/cp/atomiclongs/orders/incrementAndGet')).text(), '{"value":11}', 'two of three go on');
    await restartAt(follower);
    await waitSettled(ports, 3, 30_000);
    const listed = await until('the restarted member lists the same CP members', 30_000, async () => {
      const r = await get(follower, '/grid/rest/cp-subsystem/members');
      return r.status === 200 ? JSON.stringify(r.json()) : null;
    });
    assert.deepEqual(JSON.parse(listed).map((m: Json) => m.uuid).sort(), JSON.parse(before1).map((m: Json) => m.uuid).sort(), 'the same CP UUIDs');
    // The third member (neither the leader nor the restarted one) goes: only with the restarted
    // member's vote and log does the group keep a majority.
    const third = ports.find((p) => p !== leaderPort && p !== follower) as number;
    await kill9(third);
    const t0 = Date.now();
    const answered = await until('a write with the restarted member as the majority', 30_000, async () => {
      const r = await post(follower, '/grid/rest/cp/atomiclongs/orders/incrementAndGet');
      return r.status === 200 ? r.text() : null;
    });
    assert.equal(answered, '{"value":12}');
    console.log(`# with one member down and one restarted from its directory, a write answered after ${Date.now() - t0} ms`);
    await restartAt(third);
    await waitSettled(ports, 3, 30_000);
  });

  test('kill -9 of every member at once: counter, reference, session and the lock it holds are back', async () => {
    const p0 = ports[0] as number;
    await until('a write', 30_000, async () => ((await post(p0, '/grid/rest/cp/atomicrefs/config', 'v7')).status === 200 ? true : null));
    const session = ((await post(p0, '/grid/rest/cp/sessions/default')).json() as { sessionId: number }).sessionId;
    const locked = await post(ports[1] as number, '/grid/rest/cp/locks/job/lock', `${session}`);
    assert.equal(locked.status, 200, locked.text());
    const fence = (locked.json() as { fence: number }).fence;
    const counter = await value(p0);
    await Promise.all(ports.map((p) => kill9(p)));
    for (const p of ports) await restartAt(p);
    await waitSettled(ports, 3, 30_000);
    const t0 = Date.now();
    const after1 = await until('the CP subsystem back from disk', 60_000, async () => value(ports[2] as number));
    console.log(`# a whole cluster restarted from its CP directories answered a read ${Date.now() - t0} ms after it formed`);
    assert.equal(after1, counter, 'the counter');
    assert.equal((await get(ports[1] as number, '/grid/rest/cp/atomicrefs/config')).text(), 'v7');
    assert.deepEqual((await get(ports[2] as number, '/grid/rest/cp/locks/job')).json(), { locked: true, fence, lockCount: 1, sessionId: session }, 'the lock, its owner and fence');
    assert.equal((await post(ports[0] as number, `/grid/rest/cp/sessions/default/${session}/heartbeat`)).status, 200, 'the session');
    assert.equal((await post(ports[0] as number, '/grid/rest/cp/locks/job/unlock', `${session}&${fence}`)).text(), '{"locked":false}');
    assert.equal((await post(ports[1] as number, '/grid/rest/cp/atomiclongs/orders/incrementAndGet')).status, 200, 'writes go on');
  });

  test('a malformed identity file stops the member at start, naming the file', async () => {
    const victim = ports[2] as number;
    const cpMembers = (await get(ports[0] as number, '/grid/rest/cp-subsystem/members')).json() as Json[];
    const mine = cpMembers.find((m) => String(m.address).endsWith(`:${victim}`)) as Json;
    await kill9(victim);
    const file = path.join(baseDir, String(mine.uuid), 'member');
    writeFileSync(file, '{"cpUuid": broken');
    // It reads its directories once it listens, before it joins: then it stops.
    let exit: number | null = null;
    let stderr = '';
    try {
      const m = await start(victim);
      exit = await m.waitForExit(20_000);
      stderr = m.stderr() + m.stdout();
    } catch (e) {
      stderr = (e as Error).message;
      exit = 1;
    }
    assert.notEqual(exit, 0, 'the member stopped with a failure status');
    assert.ok(stderr.includes(file) && /not a CP member identity/.test(stderr), stderr.slice(-800));
  });
});
