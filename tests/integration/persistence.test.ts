// Persistence with real processes and real files (issue #13's user story, first part):
//   - a 3-member cluster with <persistence enabled="true"> and a map and a queue with
//     data-persistence: clusterShutdown, start the three again, and every acknowledged entry and
//     queue item is back through every member, in the cluster state it had (FROZEN here, which
//     must come back as FROZEN, not as the PASSIVE step of the shutdown);
//   - kill -9 of every member during a write load (fsync false), restart: every write acknowledged
//     before the kill is back;
//   - while the members wait for each other, a data call answers 503 "recovery in progress",
//     /grid/health/ready 503, and partialStart is refused under FULL_RECOVERY_ONLY; the last member
//     to come back completes the recovery.
// Every wait is bounded by a deadline.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePorts, killAll, KeepAliveClient, memberXml, metricsOf, until, waitSettled } from '../harness/cluster.js';
import { startMember, type MemberProcess } from '../harness/member-process.js';
import { request } from '../harness/raw-http.js';

const FAST = { 'grid.max.no.heartbeat.seconds': 3 };

function persistentXml(port: number, ports: readonly number[], baseDir: string, backupDir = '', policy = 'FULL_RECOVERY_ONLY'): string {
  const extra = `<persistence enabled="true"><base-dir>${baseDir}</base-dir><backup-dir>${backupDir}</backup-dir>
    <cluster-data-recovery-policy>${policy}</cluster-data-recovery-policy></persistence>
  <map name="orders"><backup-count>1</backup-count><data-persistence enabled="true" fsync="false"/></map>
  <queue name="jobs"><backup-count>1</backup-count><data-persistence enabled="true" fsync="false"/></queue>`;
  return memberXml(port, ports, { properties: FAST })
    .replace('</grid>', `${extra}</grid>`)
    .replace('<endpoint-group name="DATA" enabled="true"/>', '<endpoint-group name="DATA" enabled="true"/><endpoint-group name="PERSISTENCE" enabled="true"/>');
}

async function startAll(ports: readonly number[], baseDir: string, backupDir = ''): Promise<MemberProcess[]> {
  const members: MemberProcess[] = [];
  try {
    for (const p of ports) members.push(await startMember({ xml: persistentXml(p, ports, baseDir, backupDir), args: ['--port', String(p)] }));
  } catch (e) {
    await killAll(members);
    throw e;
  }
  return members;
}

async function ready(ports: readonly number[]): Promise<true | null> {
  for (const p of ports) if ((await request(p, 'GET', '/grid/health/ready')).status !== 200) return null;
  return true;
}

function post(port: number, action: string, body: string): Promise<import('../harness/raw-http.js').RawResponse> {
  return request(port, 'POST', `/grid/rest/management/cluster/${action}`, { body });
}

describe('persistence: the whole cluster restarts with its data', () => {
  test('clusterShutdown, start again: every entry and queue item is back, in the state it had', async () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'grid-persist-'));
    const ports = await freePorts(3);
    let members = await startAll(ports, base);
    try {
      await waitSettled(ports, 3, 30_000);
      for (let i = 0; i < 300; i++) {
        const r = await request(ports[i % 3] as number, 'POST', `/grid/rest/maps/orders/k${i}`, { body: `v${i}`, headers: { 'Content-Type': i % 2 === 0 ? 'text/plain' : 'application/json' } });
        assert.equal(r.status, 200);
      }
      for (let i = 0; i < 40; i++) assert.equal((await request(ports[i % 3] as number, 'POST', '/grid/rest/queues/jobs', { body: `item${i}` })).status, 200);
      // The log shows in the metrics (JSON and Prometheus read the same figures).
      const figures = await metricsOf(ports[0] as number);
      assert.ok((figures['persistenceRecordsWritten'] ?? 0) > 0 && (figures['persistenceLogBytes'] ?? 0) > 0 && figures['persistenceRecovering'] === 0, JSON.stringify(figures));
      // Taken before the stop: must not come back.
      for (let i = 0; i < 5; i++) assert.equal((await request(ports[0] as number, 'GET', '/grid/rest/queues/jobs/0')).status, 200);
      for (let i = 0; i < 10; i++) assert.equal((await request(ports[1] as number, 'DELETE', `/grid/rest/maps/orders/k${i}`)).status, 200);
      assert.equal((await post(ports[0] as number, 'changeState', 'dev&&frozen')).status, 200);
      assert.equal((await post(ports[1] as number, 'clusterShutdown', 'dev&')).status, 200);
      assert.deepEqual(await Promise.all(members.map((m) => m.waitForExit(20_000))), [0, 0, 0]);

      // Each member kept its own directory.
      const dirs = fs.readdirSync(base).filter((d) => !d.startsWith('.'));
      assert.equal(dirs.length, 3);
      for (const d of dirs) assert.ok(fs.readdirSync(path.join(base, d)).includes('member.meta'), `${d} holds member.meta`);

      members = await startAll(ports, base);
      await until('the restarted cluster is ready', 60_000, () => ready(ports));
      for (const m of members) assert.match(m.stdout(), /recovery is over/);
      assert.equal(fs.readdirSync(base).filter((d) => !d.startsWith('.')).length, 3, 'no new directory: each member took its own');
      for (const p of ports) {
        const state = await post(p, 'state', 'dev&');
        assert.deepEqual(state.json(), { status: 'success', state: 'frozen' });
      }
      for (const p of ports) {
        const c = new KeepAliveClient(p);
        try {
          for (let i = 0; i < 300; i++) {
            const r = await c.request('GET', `/grid/rest/maps/orders/k${i}`);
            if (i < 10) assert.equal(r.status, 204, `k${i} was removed`);
            else {
              assert.equal(r.status, 200, `k${i} through ${p}`);
              assert.equal(r.text(), `v${i}`);
              assert.equal(r.headers['content-type'], i % 2 === 0 ? 'text/plain' : 'application/json');
            }
          }
        } finally {
          c.close();
        }
      }
      assert.equal((await post(ports[2] as number, 'changeState', 'dev&&active')).status, 200);
      const items: string[] = [];
      for (let i = 0; i < 40; i++) {
        const r = await request(ports[i % 3] as number, 'GET', '/grid/rest/queues/jobs/0');
        if (r.status === 204) break;
        items.push(r.text());
      }
      assert.deepEqual(items, Array.from({ length: 35 }, (_, i) => `item${i + 5}`));
    } finally {
      await killAll(members);
      fs.rmSync(base, { recursive: true, force: true });
    }
  });

  test('kill -9 of every member under writes: every acknowledged write is back', async () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'grid-persist-'));
    const ports = await freePorts(3);
    let members = await startAll(ports, base);
    try {
      await waitSettled(ports, 3, 30_000);
      const acked = new Map<string, string>();
      let stop = false;
      const writers = ports.map(async (p, w) => {
        const c = new KeepAliveClient(p);
        try {
          for (let i = 0; !stop; i++) {
            const key = `w${w}-${i % 400}`;
            const value = `${w}:${i}`;
            try {
              const r = await c.request('POST', `/grid/rest/maps/orders/${key}`, { body: value });
              if (r.status === 200) acked.set(key, value);
            } catch {
              return; // the member died under the request
            }
          }
        } finally {
          c.close();
        }
      });
      await until('some writes acknowledged', 20_000, async () => (acked.size >= 600 ? true : null));
      for (const m of members) m.child.kill('SIGKILL');
      stop = true;
      await Promise.all(members.map((m) => m.waitForExit(10_000)));
      await Promise.all(writers);
      const snapshot = new Map(acked);

      members = await startAll(ports, base);
      await until('the restarted cluster is ready', 60_000, () => ready(ports));
      const c = new KeepAliveClient(ports[0] as number);
      try {
        const wrong: string[] = [];
        for (const [key, value] of snapshot) {
          const r = await c.request('GET', `/grid/rest/maps/orders/${key}`);
          // A later write to the same key may have been applied but not acknowledged: then it is
          // that one's value (same writer, higher counter).
          if (r.status !== 200) wrong.push(`${key}: ${r.status}`);
          else if (r.text() !== value) {
            const [w, n] = r.text().split(':').map(Number);
            const [ew, en] = value.split(':').map(Number);
            if (w !== ew || (n as number) < (en as number)) wrong.push(`${key}: ${r.text()} instead of ${value}`);
          }
        }
        assert.deepEqual(wrong, [], `${wrong.length} of ${snapshot.size} acknowledged writes missing or older`);
      } finally {
        c.close();
      }
    } finally {
      await killAll(members);
      fs.rmSync(base, { recursive: true, force: true });
    }
  });

  test('while members wait for each other: 503 recovery in progress, not ready; the last one completes it', async () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'grid-persist-'));
    const ports = await freePorts(3);
    let members = await startAll(ports, base);
    try {
      await waitSettled(ports, 3, 30_000);
      for (let i = 0; i < 30; i++) assert.equal((await request(ports[i % 3] as number, 'POST', `/grid/rest/maps/orders/k${i}`, { body: `v${i}` })).status, 200);
      assert.equal((await post(ports[0] as number, 'clusterShutdown', 'dev&')).status, 200);
      await Promise.all(members.map((m) => m.waitForExit(20_000)));
      // Two of three come back: they wait.
      members = [];
      for (const p of ports.slice(0, 2)) members.push(await startMember({ xml: persistentXml(p, ports, base), args: ['--port', String(p)] }));
      await until('the two have joined each other', 30_000, async () => {
        const r = await request(ports[0] as number, 'GET', '/grid/rest/cluster');
        return r.status === 200 && (r.json() as { members: unknown[] }).members.length === 2 ? true : null;
      });
      const data = await request(ports[0] as number, 'GET', '/grid/rest/maps/orders/k1');
      assert.equal(data.status, 503);
      assert.equal(data.headers['grid-error'], 'recovery in progress');
      assert.equal((await request(ports[1] as number, 'GET', '/grid/health/ready')).status, 503);
      // FULL_RECOVERY_ONLY: no partial start.
      assert.deepEqual((await post(ports[0] as number, 'partialStart', 'dev&')).json(), { status: 'fail', message: 'the cluster-data-recovery-policy is FULL_RECOVERY_ONLY: a partial start is not allowed' });
      members.push(await startMember({ xml: persistentXml(ports[2] as number, ports, base), args: ['--port', String(ports[2])] }));
      await until('the cluster is ready once the third is back', 60_000, () => ready(ports));
      for (let i = 0; i < 30; i++) assert.equal((await request(ports[2] as number, 'GET', `/grid/rest/maps/orders/k${i}`)).text(), `v${i}`);
    } finally {
      await killAll(members);
      fs.rmSync(base, { recursive: true, force: true });
    }
  });

  test('backup: every member copies its store; a cluster started on a backup holds exactly its data', async () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'grid-persist-'));
    const backups = fs.mkdtempSync(path.join(os.tmpdir(), 'grid-backup-'));
    const ports = await freePorts(3);
    let members = await startAll(ports, base, backups);
    try {
      await waitSettled(ports, 3, 30_000);
      for (let i = 0; i < 100; i++) assert.equal((await request(ports[i % 3] as number, 'POST', `/grid/rest/maps/orders/k${i}`, { body: `v${i}` })).status, 200);
      for (let i = 0; i < 10; i++) assert.equal((await request(ports[i % 3] as number, 'POST', '/grid/rest/queues/jobs', { body: `item${i}` })).status, 200);
      // Nothing running: interrupt does nothing and says success.
      assert.deepEqual((await post(ports[2] as number, 'backupInterrupt', 'dev&')).json(), { status: 'success' });
      const first = await post(ports[0] as number, 'backup', 'dev&');
      assert.deepEqual(first.json(), { status: 'success' });
      assert.equal(first.headers['deprecation'], undefined);
      const copies = fs.readdirSync(path.join(backups, 'backup-1'));
      assert.equal(copies.length, 3);
      for (const d of copies) assert.ok(fs.readdirSync(path.join(backups, 'backup-1', d)).includes('member.meta'));
      // After the backup: changes that backup-1 must not have.
      for (let i = 0; i < 20; i++) assert.equal((await request(ports[1] as number, 'DELETE', `/grid/rest/maps/orders/k${i}`)).status, 200);
      assert.equal((await request(ports[0] as number, 'POST', '/grid/rest/maps/orders/late', { body: 'x' })).status, 200);
      const second = await post(ports[1] as number, 'hotBackup', 'dev&');
      assert.deepEqual(second.json(), { status: 'success' });
      assert.equal(second.headers['deprecation'], 'true');
      assert.equal(fs.readdirSync(path.join(backups, 'backup-2')).length, 3, 'the number rises, the same on every member');
      assert.equal((await post(ports[0] as number, 'clusterShutdown', 'dev&')).status, 200);
      await Promise.all(members.map((m) => m.waitForExit(20_000)));

      // A cluster started on backup-1 holds exactly its data.
      members = await startAll(ports, path.join(backups, 'backup-1'));
      await until('the cluster on backup-1 is ready', 60_000, () => ready(ports));
      for (let i = 0; i < 100; i++) {
        const r = await request(ports[i % 3] as number, 'GET', `/grid/rest/maps/orders/k${i}`);
        assert.equal(r.status, 200, `k${i}`);
        assert.equal(r.text(), `v${i}`);
      }
      assert.equal((await request(ports[0] as number, 'GET', '/grid/rest/maps/orders/late')).status, 204);
      assert.equal((await request(ports[0] as number, 'GET', '/grid/rest/queues/jobs/size')).text(), '10');
    } finally {
      await killAll(members);
      fs.rmSync(base, { recursive: true, force: true });
      fs.rmSync(backups, { recursive: true, force: true });
    }
  });

  test('without a backup-dir, backup and its interrupt answer 400; hotBackup keeps Deprecation', async () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'grid-persist-'));
    const ports = await freePorts(1);
    const members = await startAll(ports, base);
    try {
      await until('ready', 30_000, () => ready(ports));
      for (const action of ['backup', 'backupInterrupt', 'hotBackup', 'hotBackupInterrupt']) {
        const r = await post(ports[0] as number, action, 'dev&');
        assert.equal(r.status, 400, action);
        assert.equal((r.json() as { status: string }).status, 'fail');
        assert.equal(r.headers['deprecation'], action.startsWith('hot') ? 'true' : undefined, action);
      }
      assert.deepEqual((await post(ports[0] as number, 'forceStart', 'dev&')).json(), { status: 'fail', message: 'no recovery is in progress: nothing to force' });
    } finally {
      await killAll(members);
      fs.rmSync(base, { recursive: true, force: true });
    }
  });

  test('rolling restart in FROZEN: a member restarts with its UUID, is admitted, reloads its data and serves it', async () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'grid-persist-'));
    const ports = await freePorts(3);
    let members = await startAll(ports, base);
    try {
      await waitSettled(ports, 3, 30_000);
      for (let i = 0; i < 60; i++) assert.equal((await request(ports[i % 3] as number, 'POST', `/grid/rest/maps/orders/k${i}`, { body: `v${i}` })).status, 200);
      assert.equal((await post(ports[0] as number, 'changeState', 'dev&&frozen')).status, 200);
      const victim = members[2] as MemberProcess;
      assert.equal(await victim.stop('SIGTERM', 20_000), 0);
      await until('the two others list 2 members', 30_000, async () => {
        const r = await request(ports[0] as number, 'GET', '/grid/rest/cluster');
        return (r.json() as { members: unknown[] }).members.length === 2 ? true : null;
      });
      const back = await startMember({ xml: persistentXml(ports[2] as number, ports, base), args: ['--port', String(ports[2])] });
      members = [members[0] as MemberProcess, members[1] as MemberProcess, back];
      await until('the three are ready again', 60_000, () => ready(ports));
      assert.match(back.stdout(), /recovery is over; the cluster state is FROZEN/);
      for (let i = 0; i < 60; i++) assert.equal((await request(ports[2] as number, 'GET', `/grid/rest/maps/orders/k${i}`)).text(), `v${i}`, `k${i} through the restarted member`);
      assert.equal((await post(ports[1] as number, 'changeState', 'dev&&active')).status, 200);
      await waitSettled(ports, 3, 30_000);
      for (let i = 0; i < 60; i++) assert.equal((await request(ports[i % 3] as number, 'GET', `/grid/rest/maps/orders/k${i}`)).text(), `v${i}`);
    } finally {
      await killAll(members);
      fs.rmSync(base, { recursive: true, force: true });
    }
  });

  async function twoOfThreeBack(policy: string): Promise<{ base: string; ports: number[]; members: MemberProcess[] }> {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'grid-persist-'));
    const ports = await freePorts(3);
    const start = (p: number): Promise<MemberProcess> => startMember({ xml: persistentXml(p, ports, base, '', policy), args: ['--port', String(p)] });
    let members: MemberProcess[] = [];
    try {
      for (const p of ports) members.push(await start(p));
      await waitSettled(ports, 3, 30_000);
      for (let i = 0; i < 60; i++) assert.equal((await request(ports[i % 3] as number, 'POST', `/grid/rest/maps/orders/k${i}`, { body: `v${i}` })).status, 200);
      assert.equal((await post(ports[0] as number, 'clusterShutdown', 'dev&')).status, 200);
      await Promise.all(members.map((m) => m.waitForExit(20_000)));
      members = [];
      for (const p of ports.slice(0, 2)) members.push(await start(p));
      await until('the two have joined each other', 30_000, async () => {
        const r = await request(ports[0] as number, 'GET', '/grid/rest/cluster');
        return r.status === 200 && (r.json() as { members: unknown[] }).members.length === 2 ? true : null;
      });
      assert.equal((await request(ports[1] as number, 'GET', '/grid/rest/maps/orders/k1')).status, 503);
    } catch (e) {
      await killAll(members);
      throw e;
    }
    return { base, ports, members };
  }

  test('forceStart while members wait: every member starts over empty with a new UUID; the one coming back later is stale and starts over too', async () => {
    const { base, ports, members } = await twoOfThreeBack('FULL_RECOVERY_ONLY');
    try {
      const uuidsBefore = fs.readdirSync(base).filter((d) => !d.startsWith('.')).sort();
      assert.deepEqual((await post(ports[1] as number, 'forceStart', 'dev&')).json(), { status: 'success' });
      await until('the two started over and are ready', 60_000, () => ready(ports.slice(0, 2)));
      assert.equal((await request(ports[0] as number, 'GET', '/grid/rest/maps/orders/k1')).status, 204, 'the cluster starts empty');
      for (const m of members) assert.match(m.stdout(), /wipes its persisted data and joins as a new member/);
      members.push(await startMember({ xml: persistentXml(ports[2] as number, ports, base), args: ['--port', String(ports[2])] }));
      await until('the third is stale, starts over and joins', 60_000, async () => ((await ready(ports)) === true && (await request(ports[2] as number, 'GET', '/grid/rest/cluster')).json() !== null ? true : null));
      assert.match((members[2] as MemberProcess).stdout(), /stale/);
      await waitSettled(ports, 3, 30_000);
      for (const p of ports) assert.equal((await request(p, 'GET', '/grid/rest/maps/orders/k2')).status, 204);
      const uuidsAfter = fs.readdirSync(base).filter((d) => !d.startsWith('.')).sort();
      assert.equal(uuidsAfter.length, 3, 'three directories, all new');
      for (const u of uuidsAfter) assert.ok(!uuidsBefore.includes(u), `${u} is a new member's directory`);
    } finally {
      await killAll(members);
      fs.rmSync(base, { recursive: true, force: true });
    }
  });

  test('PARTIAL_RECOVERY_MOST_RECENT: partialStart starts the two with every entry backups cover; the third comes back stale and joins anew', async () => {
    const { base, ports, members } = await twoOfThreeBack('PARTIAL_RECOVERY_MOST_RECENT');
    try {
      assert.deepEqual((await post(ports[0] as number, 'partialStart', 'dev&')).json(), { status: 'success' });
      await until('the two are ready', 60_000, () => ready(ports.slice(0, 2)));
      // With one backup per partition, every partition kept a replica on one of the two.
      for (let i = 0; i < 60; i++) assert.equal((await request(ports[i % 2] as number, 'GET', `/grid/rest/maps/orders/k${i}`)).text(), `v${i}`);
      members.push(await startMember({ xml: persistentXml(ports[2] as number, ports, base, '', 'PARTIAL_RECOVERY_MOST_RECENT'), args: ['--port', String(ports[2])] }));
      await until('the third joins as a new member', 60_000, () => ready(ports));
      assert.match((members[2] as MemberProcess).stdout(), /stale/);
      await waitSettled(ports, 3, 60_000);
      for (let i = 0; i < 60; i++) assert.equal((await request(ports[2] as number, 'GET', `/grid/rest/maps/orders/k${i}`)).text(), `v${i}`);
    } finally {
      await killAll(members);
      fs.rmSync(base, { recursive: true, force: true });
    }
  });
});

describe('persistence: bad directories and damaged files', () => {
  async function singleWithData(base: string, extra = '', at?: number): Promise<{ port: number; member: MemberProcess }> {
    const port = at ?? ((await freePorts(1)) as [number])[0];
    const member = await startMember({ xml: persistentXml(port, [port], base).replace('</persistence>', `${extra}</persistence>`), args: ['--port', String(port)] });
    await until('ready', 30_000, () => ready([port]));
    return { port, member };
  }

  test('a torn last write (the newest log file cut at any byte) is dropped; everything before it loads', async () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'grid-persist-'));
    let { port, member } = await singleWithData(base);
    try {
      for (let i = 0; i < 200; i++) assert.equal((await request(port, 'POST', `/grid/rest/maps/orders/k${i}`, { body: `v${i}` })).status, 200);
      member.child.kill('SIGKILL');
      await member.waitForExit(10_000);
      const [dir] = fs.readdirSync(base).filter((d) => !d.startsWith('.'));
      const open = fs.readdirSync(path.join(base, dir as string)).filter((f) => f.endsWith('.open'));
      assert.equal(open.length, 1);
      const file = path.join(base, dir as string, open[0] as string);
      const size = fs.statSync(file).size;
      fs.truncateSync(file, size - 37); // inside the last record
      ({ port, member } = await singleWithData(base, '', port));
      assert.match(member.stdout(), /dropped a torn last write of \d+ bytes at offset \d+/);
      let back = 0;
      for (let i = 0; i < 200; i++) if ((await request(port, 'GET', `/grid/rest/maps/orders/k${i}`)).status === 200) back++;
      assert.equal(back, 199, 'every entry but the torn one');
      assert.equal((await request(port, 'GET', '/grid/rest/maps/orders/k199')).status, 204);
    } finally {
      await killAll([member]);
      fs.rmSync(base, { recursive: true, force: true });
    }
  });

  test('a corrupt record in the middle of a log stops the start, naming the file and offset; nothing is deleted', async () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'grid-persist-'));
    const { port, member } = await singleWithData(base);
    try {
      for (let i = 0; i < 200; i++) assert.equal((await request(port, 'POST', `/grid/rest/maps/orders/k${i}`, { body: `v${i}` })).status, 200);
      await member.stop('SIGTERM', 20_000);
      const [dir] = fs.readdirSync(base).filter((d) => !d.startsWith('.'));
      const full = path.join(base, dir as string);
      const file = path.join(full, fs.readdirSync(full).find((f) => f.endsWith('.open')) as string);
      const bytes = fs.readFileSync(file);
      const middle = Math.floor(bytes.length / 2);
      bytes[middle] = (bytes[middle] as number) ^ 0x20;
      fs.writeFileSync(file, bytes);
      const before = fs.readdirSync(full).sort();
      const again: MemberProcess | Error = await startMember({ xml: persistentXml(port, [port], base), args: ['--port', String(port)] }).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
      let out = '';
      if (again instanceof Error) out = again.message;
      else {
        assert.equal(await again.waitForExit(20_000), 1);
        out = again.stderr() + again.stdout();
      }
      assert.match(out, new RegExp(`${path.basename(file).replace('.', '\\.')}: corrupt log record at offset \\d+`));
      assert.deepEqual(fs.readdirSync(full).sort(), before, 'nothing deleted');
    } finally {
      await killAll([member]);
      fs.rmSync(base, { recursive: true, force: true });
    }
  });

  test('base-dir that is a file, or cannot be written, stops the start naming it; a second process takes its own directory', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'grid-persist-'));
    const members: MemberProcess[] = [];
    try {
      const asFile = path.join(tmp, 'not-a-dir');
      fs.writeFileSync(asFile, 'x');
      const [port] = (await freePorts(1)) as [number];
      const r: MemberProcess | Error = await startMember({ xml: persistentXml(port, [port], asFile), args: ['--port', String(port)] }).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
      if (r instanceof Error) assert.match(r.message, /not-a-dir/);
      else {
        members.push(r);
        assert.equal(await r.waitForExit(20_000), 1);
        assert.match(r.stderr(), /cannot start: .*not-a-dir/);
      }
      // Two members on one base-dir: each its own directory, locked.
      const base = path.join(tmp, 'shared');
      const ports = await freePorts(2);
      for (const p of ports) members.push(await startMember({ xml: persistentXml(p, [p], base), args: ['--port', String(p)] }));
      await until('both ready', 30_000, () => ready(ports));
      const dirs = fs.readdirSync(base).filter((d) => !d.startsWith('.'));
      assert.equal(dirs.length, 2);
      for (const d of dirs) assert.match(fs.readFileSync(path.join(base, d, '.lock'), 'utf8'), /^\d+ pid \d+/);
    } finally {
      await killAll(members);
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });

  test('auto-remove-stale-data false: a member the cluster went on without stops with exit status 3 and keeps its data', async () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'grid-persist-'));
    const ports = await freePorts(2);
    const xml = (p: number): string => persistentXml(p, ports, base).replace('</persistence>', '<auto-remove-stale-data>false</auto-remove-stale-data></persistence>');
    let members: MemberProcess[] = [];
    try {
      for (const p of ports) members.push(await startMember({ xml: xml(p), args: ['--port', String(p)] }));
      await waitSettled(ports, 2, 30_000);
      for (let i = 0; i < 20; i++) assert.equal((await request(ports[0] as number, 'POST', `/grid/rest/maps/orders/k${i}`, { body: `v${i}` })).status, 200);
      // The second member is killed; the first goes on alone (its partitions are promoted).
      (members[1] as MemberProcess).child.kill('SIGKILL');
      await (members[1] as MemberProcess).waitForExit(10_000);
      await until('the first is alone and safe', 30_000, async () => {
        const r = await request(ports[0] as number, 'GET', '/grid/rest/cluster');
        return (r.json() as { members: unknown[] }).members.length === 1 ? true : null;
      });
      const dirsBefore = fs.readdirSync(base).filter((d) => !d.startsWith('.')).sort();
      const late = await startMember({ xml: xml(ports[1] as number), args: ['--port', String(ports[1])] });
      members = [members[0] as MemberProcess, late];
      assert.equal(await late.waitForExit(60_000), 3);
      assert.match(late.stdout(), /auto-remove-stale-data is false/);
      assert.deepEqual(fs.readdirSync(base).filter((d) => !d.startsWith('.')).sort(), dirsBefore, 'its directory is kept');
    } finally {
      await killAll(members);
      fs.rmSync(base, { recursive: true, force: true });
    }
  });
});
