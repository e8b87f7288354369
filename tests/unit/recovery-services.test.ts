// The recovery services on their own (src/recovery/): the whole-cluster recovery's decisions and the
// hot backup's coordination, each against a hand-made host and a stand-in for the member's
// persistence (what it loaded, and a backup that finishes when told). Whole members exercise them
// with real files in tests/integration/ (persistence restart, forceStart, partial start, backup).
import test from 'node:test';
import assert from 'node:assert/strict';
import { message, type Message } from '../../src/cluster/messages.js';
import type { MemberContext } from '../../src/cluster/service.js';
import type { RequestableClusterState } from '../../src/cluster/cluster-state.js';
import { ClusterRecovery } from '../../src/recovery/cluster-recovery.js';
import { HotBackup } from '../../src/recovery/hot-backup.js';
import type { NodePersistence } from '../../src/persistence/node-persistence.js';
import { PartitionTable } from '../../src/partition/table.js';
import { Logger } from '../../src/util/logger.js';
import { FakeTime } from '../harness/fake-time.js';
import { scenarioConfig } from '../harness/sim-cluster.js';
import type { Config } from '../../src/config/types.js';

const log = new Logger('OFF', 'text', { write: () => {} }).component('test');

function context(self: string, sent: { to: string; m: Message }[], members: string[]): MemberContext {
  return {
    selfUuid: self,
    joined: () => true,
    isMaster: () => members[0] === self,
    isMember: (u) => members.includes(u),
    masterUuid: () => members[0] ?? null,
    memberUuids: () => [...members],
    addressOf: (u) => `${u}:5701`,
    send: (to, m) => sent.push({ to, m }),
  };
}

/** A table of 4 partitions over a and b (width 2), `bumps` changes later. */
function tableOf(bumps: number): PartitionTable {
  let t = PartitionTable.empty(4, 2).withReplicas(new Map([[0, ['a', 'b']], [1, ['b', 'a']], [2, ['a', 'b']], [3, ['b', 'a']]]));
  for (let i = 0; i < bumps; i++) t = t.withReplicas(new Map([[i % 4, i % 2 === 0 ? ['b', 'a'] : ['a', 'b']]]));
  return t;
}

/** What a member loaded from its directory: the metadata of an earlier run with `table`. */
function loaded(table: PartitionTable, clusterState = 'FROZEN'): NodePersistence {
  const metadata = { memberUuid: 'a', address: 'a:5701', clusterName: 'dev', partitionCount: 4, members: [], membersVersion: 3, table: table.toWire(), clusterState, clusterVersion: '0.1', lastAliveMs: 0, backupSeq: 2 };
  const result = { report: { segments: 1, bytes: 10, tornTail: null }, tally: { records: 5, entriesSkippedExpired: 0 } };
  return { setup: { dir: '/data/a', metadata, backupDir: '' }, load: () => result } as unknown as NodePersistence;
}

function recovery(
  sent: { to: string; m: Message }[],
  members: string[],
  persistence: NodePersistence,
  policy: Partial<Config['persistence']>,
  time: FakeTime,
  out: { state: RequestableClusterState; startOver: string[]; restored: PartitionTable | null },
) {
  const clock = { nowMs: () => time.nowMs, monotonicMs: () => time.nowMs };
  const base = scenarioConfig({ GRID_PROPERTY_GRID_PARTITION_COUNT: '4' });
  return new ClusterRecovery(
    {
      ...context('a', sent, members),
      config: { ...base, persistence: { ...base.persistence, ...policy } },
      table: () => out.restored ?? PartitionTable.empty(4, 2),
      restoreTable: (t) => (out.restored = t),
      state: () => out.state,
      setState: (s) => (out.state = s),
      holdState: (s) => (out.state = s),
      promoteDeparted: () => {},
      jumpVersion: () => {},
      saveMetadata: () => {},
      stopped: () => false,
      startOver: (r) => out.startOver.push(r),
      staleStop: () => {},
    },
    persistence,
    clock,
    log,
  );
}

test('a restarted cluster holds PASSIVE until every member of the persisted table is back with it, then resumes the persisted state', () => {
  const time = new FakeTime();
  const sent: { to: string; m: Message }[] = [];
  const out = { state: 'ACTIVE' as RequestableClusterState, startOver: [] as string[], restored: null as PartitionTable | null };
  const t = tableOf(3);
  const r = recovery(sent, ['a', 'b'], loaded(t), {}, time, out);
  r.load('a');
  assert.equal(r.active, true);
  assert.equal(out.state, 'PASSIVE', 'held PASSIVE while recovering');
  assert.equal(out.restored?.version, t.version, 'the persisted table is installed as it was');
  r.handle({ uuid: 'a', address: 'a:5701' }, message('recoveryReport', { tableVersion: t.version, tableStamp: t.stamp() }));
  r.tick();
  assert.equal(sent.filter((s) => s.m.kind === 'recoveryDone').length, 0, 'b has not reported yet');
  r.handle({ uuid: 'b', address: 'b:5701' }, message('recoveryReport', { tableVersion: t.version, tableStamp: t.stamp() }));
  r.tick();
  const done = sent.filter((s) => s.m.kind === 'recoveryDone');
  assert.deepEqual(done.map((s) => s.to), ['a', 'b']);
  r.handle({ uuid: 'a', address: 'a:5701' }, done[0]?.m as Message);
  assert.equal(r.active, false);
  assert.equal(out.state, 'FROZEN', 'the persisted state resumes');
});

test('PARTIAL_RECOVERY_MOST_RECENT after the validation timeout: the group with the newest table goes on, the others are stale', () => {
  const time = new FakeTime();
  const sent: { to: string; m: Message }[] = [];
  const out = { state: 'ACTIVE' as RequestableClusterState, startOver: [] as string[], restored: null as PartitionTable | null };
  const mine = tableOf(5);
  const older = tableOf(2);
  // a's table names a and b; b never comes back, and c comes with an older table.
  const r = recovery(sent, ['a', 'b', 'c'], loaded(mine, 'ACTIVE'), { clusterDataRecoveryPolicy: 'PARTIAL_RECOVERY_MOST_RECENT', validationTimeoutSeconds: 30 }, time, out);
  r.load('a');
  r.handle({ uuid: 'a', address: 'a:5701' }, message('recoveryReport', { tableVersion: mine.version, tableStamp: mine.stamp() }));
  r.handle({ uuid: 'c', address: 'c:5701' }, message('recoveryReport', { tableVersion: older.version, tableStamp: older.stamp() }));
  r.tick();
  assert.equal(sent.filter((s) => s.m.kind === 'recoveryDone').length, 0, 'b is missing and the timeout has not passed');
  time.advance(30_001);
  r.tick();
  assert.deepEqual(sent.filter((s) => s.m.kind === 'recoveryStale').map((s) => s.to), ['c']);
  assert.deepEqual(sent.filter((s) => s.m.kind === 'recoveryDone').map((s) => s.to), ['a']);
  assert.deepEqual(out.startOver, []);
});

test('a hot backup asks every member for its last number, then has all copy under one above the highest', async () => {
  const time = new FakeTime();
  const clock = { nowMs: () => time.nowMs, monotonicMs: () => time.nowMs };
  const sent: { to: string; m: Message }[] = [];
  const finishes: ((error: Error | null) => void)[] = [];
  const targets: string[] = [];
  const persistence = {
    setup: { backupDir: '/backups', metadata: { backupSeq: 4 } },
    backup: (target: string, _m: unknown, _step: unknown, done: (e: Error | null) => void) => {
      targets.push(target);
      finishes.push(done);
      return () => {};
    },
  } as unknown as NodePersistence;
  const host = { ...context('a', sent, ['a', 'b']), recovering: () => false, metadataNow: () => ({}) as never, saveMetadata: () => {} };
  const coordinator = new HotBackup(host, persistence, clock, time, log);
  const done = coordinator.start();
  assert.deepEqual(sent.map((s) => [s.to, s.m.kind, (s.m as Message & { kind: 'backupStart' }).body.seq]), [['a', 'backupStart', 0], ['b', 'backupStart', 0]]);
  coordinator.handle({ uuid: 'a', address: 'a:5701' }, message('backupResult', { seq: 0, ok: true, message: '', lastSeq: 4 }));
  coordinator.handle({ uuid: 'b', address: 'b:5701' }, message('backupResult', { seq: 0, ok: true, message: '', lastSeq: 7 }));
  const round = sent.slice(2).map((s) => (s.m as Message & { kind: 'backupStart' }).body.seq);
  assert.deepEqual(round, [8, 8], 'one above the highest number any member used');
  // This member copies its own store, then b answers.
  coordinator.handle({ uuid: 'a', address: 'a:5701' }, sent[2]?.m as Message);
  assert.deepEqual(targets, ['/backups/backup-8/a']);
  finishes[0]?.(null);
  const mine = sent.at(-1)?.m as Message & { kind: 'backupResult' };
  assert.equal(mine.body.ok, true);
  coordinator.handle({ uuid: 'a', address: 'a:5701' }, mine);
  coordinator.handle({ uuid: 'b', address: 'b:5701' }, message('backupResult', { seq: 8, ok: true, message: '', lastSeq: 8 }));
  assert.deepEqual(await done, { ok: true, message: '' });
  assert.equal(coordinator.seq, 8);
});

test('a member that leaves during a backup fails it with its name', async () => {
  const time = new FakeTime();
  const clock = { nowMs: () => time.nowMs, monotonicMs: () => time.nowMs };
  const sent: { to: string; m: Message }[] = [];
  const persistence = { setup: { backupDir: '/backups', metadata: null }, backup: () => () => {} } as unknown as NodePersistence;
  const coordinator = new HotBackup({ ...context('a', sent, ['a', 'b']), recovering: () => false, metadataNow: () => ({}) as never, saveMetadata: () => {} }, persistence, clock, time, log);
  const done = coordinator.start();
  coordinator.handle({ uuid: 'a', address: 'a:5701' }, message('backupResult', { seq: 0, ok: true, message: '', lastSeq: 0 }));
  coordinator.memberRemoved('b');
  const r = await done;
  assert.equal(r.ok, false);
  assert.match(r.message, /b: left the cluster during the backup/);
});
