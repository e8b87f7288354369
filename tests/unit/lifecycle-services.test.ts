// The lifecycle services on their own (src/lifecycle/): the two-phase cluster-state change, the
// graceful leave and the cluster-wide commands, each against a hand-made host and hand-driven time.
// Whole members exercise them in tests/integration/ (cluster-state, graceful shutdown, clusterShutdown).
import test from 'node:test';
import assert from 'node:assert/strict';
import { message, type Message } from '../../src/cluster/messages.js';
import type { MemberContext } from '../../src/cluster/service.js';
import type { RequestableClusterState } from '../../src/cluster/cluster-state.js';
import { StateChange } from '../../src/lifecycle/state-change.js';
import { Leave, DEPART_WAIT_MS } from '../../src/lifecycle/leave.js';
import { ClusterCommands } from '../../src/lifecycle/cluster-commands.js';
import { Logger } from '../../src/util/logger.js';
import { FakeTime } from '../harness/fake-time.js';
import type { Transport } from '../../src/cluster/transport.js';

const log = new Logger('OFF', 'text', { write: () => {} }).component('test');
const A = { uuid: 'a', address: 'h:1' };
const B = { uuid: 'b', address: 'h:2' };

/** A member context of members a (master) and b, recording what is sent. */
function context(self: string, sent: { to: string; m: Message }[], members = ['a', 'b']): MemberContext {
  return {
    selfUuid: self,
    joined: () => members.length > 0,
    isMaster: () => members[0] === self,
    isMember: (u) => members.includes(u),
    masterUuid: () => members[0] ?? null,
    memberUuids: () => [...members],
    addressOf: (u) => (u === 'a' ? A.address : u === 'b' ? B.address : null),
    send: (to, m) => sent.push({ to, m }),
  };
}

function stateChange(self: string, sent: { to: string; m: Message }[], time: FakeTime, extra: { migrations?: () => number; changed?: RequestableClusterState[] } = {}): StateChange {
  const clock = { nowMs: () => time.nowMs, monotonicMs: () => time.nowMs };
  return new StateChange(
    { ...context(self, sent), membersVersion: () => 4, tableVersion: () => 9, activeMigrations: extra.migrations ?? (() => 0), onChanged: (s) => extra.changed?.push(s) },
    20_000,
    clock,
    time,
    log,
  );
}

test('a state change locks every member, then commits on all; the initiator sees the state when the promise resolves', async () => {
  const time = new FakeTime();
  const sent: { to: string; m: Message }[] = [];
  const changed: RequestableClusterState[] = [];
  const a = stateChange('a', sent, time, { changed });
  const done = a.change('FROZEN', 'admin');
  assert.deepEqual(sent.map((s) => [s.to, s.m.kind]), [['a', 'stateLock'], ['b', 'stateLock']]);
  const lock = sent[0]?.m as Message & { kind: 'stateLock' };
  // b takes the lock (same list and table versions, nothing migrating) and answers yes.
  const bSent: { to: string; m: Message }[] = [];
  const b = stateChange('b', bSent, time);
  b.handle(A, lock);
  assert.equal(b.reported, 'IN_TRANSITION', 'a locked member reports IN_TRANSITION');
  a.handle(A, message('stateLockAnswer', { txId: lock.body.txId, ok: true, message: '' }));
  a.handle(B, bSent[0]?.m as Message);
  assert.equal(await done, 'changed');
  assert.equal(a.state, 'FROZEN');
  assert.deepEqual(changed, ['FROZEN']);
  const commit = sent.find((s) => s.to === 'b' && s.m.kind === 'stateCommit')?.m as Message;
  b.handle(A, commit);
  assert.equal(b.state, 'FROZEN');
  assert.equal(b.reported, 'FROZEN', 'the commit releases the lock');
});

test('a member that refuses the lock rolls the change back with its reason (409)', async () => {
  const time = new FakeTime();
  const sent: { to: string; m: Message }[] = [];
  const a = stateChange('a', sent, time);
  const done = a.change('PASSIVE');
  const lock = sent[0]?.m as Message & { kind: 'stateLock' };
  const bSent: { to: string; m: Message }[] = [];
  stateChange('b', bSent, time, { migrations: () => 2 }).handle(A, lock);
  assert.deepEqual((bSent[0]?.m as Message & { kind: 'stateLockAnswer' }).body.ok, false);
  a.handle(A, message('stateLockAnswer', { txId: lock.body.txId, ok: true, message: '' }));
  a.handle(B, bSent[0]?.m as Message);
  await assert.rejects(done, (e: Error & { code?: string }) => e.code === 'ERR_CLUSTER_STATE_CONFLICT' && /migrations are running/.test(e.message));
  assert.equal(a.state, 'ACTIVE');
  assert.ok(sent.some((s) => s.to === 'b' && s.m.kind === 'stateRollback'));
});

test('a lock whose initiator vanished expires after its lease; a member takes its master\'s view state only when unlocked', () => {
  const time = new FakeTime();
  const b = stateChange('b', [], time);
  b.handle(A, message('stateLock', { txId: 'a/1', state: 2, membersVersion: 4, tableVersion: 9, leaseMs: 20_000 }));
  assert.equal(b.reported, 'IN_TRANSITION');
  const view = { clusterId: 'c', foundedAtMs: 0, membersVersion: 5, members: [], table: { version: 9, width: 2, uuids: [], slots: Buffer.alloc(0), partitionVersions: Buffer.alloc(0) }, clusterState: 3, migrationQueue: 0 };
  b.viewFromMaster(view);
  assert.equal(b.state, 'ACTIVE', 'a locked member keeps its state');
  time.advance(20_001);
  assert.equal(b.reported, 'ACTIVE', 'the lease ran out');
  b.viewFromMaster(view);
  assert.equal(b.state, 'PASSIVE');
});

test('a drained leaving member stays listed until it departs, or at the latest DEPART_WAIT_MS', () => {
  const time = new FakeTime();
  const clock = { nowMs: () => time.nowMs, monotonicMs: () => time.nowMs };
  const sent: { to: string; m: Message }[] = [];
  const departed: string[] = [];
  const leave = new Leave(
    {
      ...context('a', sent),
      liteMember: false,
      otherDataMembers: () => 1,
      state: () => 'ACTIVE',
      clusterStopping: () => false,
      requestLeave: () => {},
      memberDeparted: (u) => departed.push(u),
      handOverAndLeave: () => {},
    },
    clock,
    time,
    log,
  );
  leave.onMemberDrained('b');
  assert.deepEqual(sent.map((s) => [s.to, s.m.kind]), [['b', 'shutdownAllowed']]);
  time.advance(DEPART_WAIT_MS - 1);
  assert.deepEqual(departed, []);
  leave.handle(B, message('departing', { uuid: 'b' }));
  assert.deepEqual(departed, ['b'], 'its departing removes it');
  leave.onMemberDrained('b');
  time.advance(DEPART_WAIT_MS + 1);
  assert.deepEqual(departed, ['b', 'b'], 'without departing the timer removes it');
});

test('a leaving member asks its master every second and stops when every replica is handed off or the time is up', async () => {
  const time = new FakeTime();
  const clock = { nowMs: () => time.nowMs, monotonicMs: () => time.nowMs };
  const sent: { to: string; m: Message }[] = [];
  const host = {
    ...context('b', sent),
    liteMember: false,
    otherDataMembers: () => 1,
    state: () => 'ACTIVE' as RequestableClusterState,
    clusterStopping: () => false,
    requestLeave: () => {},
    memberDeparted: () => {},
    handOverAndLeave: () => {},
  };
  const leave = new Leave(host, clock, time, log);
  const left = leave.leaveGracefully(5000);
  time.advance(2500);
  assert.equal(sent.filter((s) => s.to === 'a' && s.m.kind === 'shutdownRequest').length, 3);
  leave.handle(A, message('shutdownAllowed', { uuid: 'b' }));
  await left;
  assert.equal(leave.replicasHandedOff, true);
  leave.depart();
  assert.equal(sent.at(-1)?.m.kind, 'departing');
  const frozen = new Leave({ ...host, state: () => 'FROZEN' }, clock, time, log);
  assert.match(frozen.handOffForbidden() ?? '', /FROZEN forbids migrations/);
  const late = new Leave(host, clock, time, log).leaveGracefully(3000);
  time.advance(3001);
  await late; // resolves although nothing was handed off
});

test('clusterShutdown resends its stop to members that did not acknowledge, and a member acts on the first copy only', async () => {
  const time = new FakeTime();
  const clock = { nowMs: () => time.nowMs, monotonicMs: () => time.nowMs };
  const out: { address: string; m: Message }[] = [];
  const transport: Transport = { send: (address, m) => (out.push({ address, m }), true), disconnect: () => {}, connectionCount: () => 0 };
  let saved = 0;
  const a = new ClusterCommands({ ...context('a', []), saveMetadata: () => saved++, onShutdownRequested: () => {} }, transport, clock, time);
  const left = a.shutdownOthers('stop', 2000);
  assert.equal(a.stopping, true);
  time.advance(1100);
  const stops = out.filter((o) => o.m.kind === 'shutdownMember');
  assert.equal(stops.length, 3, 'sent at 0, 500 and 1000 ms');
  const reasons: string[] = [];
  const b = new ClusterCommands({ ...context('b', []), saveMetadata: () => saved++, onShutdownRequested: (r) => reasons.push(r) }, transport, clock, time);
  for (const s of stops) b.handle(A, s.m);
  assert.deepEqual(reasons, ['stop'], 'acted on once');
  const acks = out.filter((o) => o.m.kind === 'shutdownMemberAck');
  assert.equal(acks.length, 3, 'every copy acknowledged');
  a.handle(B, acks[0]?.m as Message);
  assert.deepEqual(await left, [], 'every member acknowledged');
  assert.ok(saved >= 2, 'both persisted that a shutdown runs');
});
