// What a member takes as evidence about the others (src/cluster/membership.ts), each rule found by
// a seed of the 100,000-seed simulation run (docs/cluster.md, "Found by the simulation"):
// - a listed member that keeps asking to join for a heartbeat interval after the master was found
//   gone is not in the cluster (seeds 1012984 and 1057186: a master crashed 6 ms after admitting
//   three members, and only one of them got the view);
// - a confirmed migration commit proves its sender alive as a heartbeat does (seed 1018091);
// - a member whose answered table the claimer did not take leaves and hands back (seed 1036190).
import test from 'node:test';
import assert from 'node:assert/strict';
import { message } from '../../src/cluster/messages.js';
import type { MemberWire, TableWire, ViewWire } from '../../src/cluster/messages.js';
import { member, testMembership } from '../harness/membership.js';

const A = member('10.0.0.1', 'a');
const B = member('10.0.0.2', 'b');
const C = member('10.0.0.3', 'c');
const M = member('10.0.0.4', 'm');
const peer = (x: MemberWire): { uuid: string; address: string } => ({ uuid: x.uuid, address: `${x.host}:5701` });
const CLUSTER = { clusterId: 'c', dataMembers: 1, foundedAtMs: 1 };

function table(version: number): TableWire {
  return { version, width: 0, uuids: [], slots: Buffer.alloc(0), partitionVersions: Buffer.alloc(0) };
}

function view(members: MemberWire[], membersVersion: number, tableVersion = 0): ViewWire {
  return { clusterId: 'c', foundedAtMs: 1, membersVersion, members, table: table(tableVersion), clusterState: 0, migrationQueue: 0 };
}

/** `self` joined through master `A` into a cluster listing `members` (A first). */
function joinedMember(self: MemberWire, members: MemberWire[], tableVersion: () => number = () => 0, onLeft: (reason: string, merging?: boolean) => void = () => {}) {
  const t = testMembership(self, ['10.0.0.1:5701'], { tableWire: () => table(tableVersion()), onLeftCluster: onLeft });
  t.m.handle(peer(A), message('joinAnswer', { masterAddress: '10.0.0.1:5701', joined: true, uuid: A.uuid, address: '10.0.0.1:5701', refusal: '', cluster: CLUSTER }));
  t.m.handle(peer(A), message('membersView', view(members, members.length, tableVersion())));
  assert.equal(t.m.joined, true);
  assert.equal(t.m.master?.uuid, A.uuid);
  return t;
}

const heartbeat = (masterUuid: string) => message('heartbeat', { membersVersion: 3, masterUuid, suspects: [] });

const joinRequest = (x: MemberWire) => message('joinRequest', { member: x, cluster: { clusterId: '', dataMembers: 0, foundedAtMs: 0 }, reset: false });

/** M in [A, B, M], B heard until 2.7 s before A (silent throughout) is suspected at 5.7 s. */
function masterGoneOlderHeard() {
  const t = joinedMember(M, [A, B, M]);
  for (let i = 0; i < 3; i++) {
    t.time.advance(1000);
    t.m.handle(peer(B), heartbeat(A.uuid));
  }
  t.time.advance(2700);
  assert.equal(t.m.isMaster, false, 'B is older and not suspected yet');
  return t;
}

test('a listed member that keeps asking to join after the master was found gone is suspected, so the next oldest takes over', () => {
  const { m, time } = masterGoneOlderHeard();
  m.handle(peer(B), joinRequest(B));
  assert.equal(m.isMaster, false, 'one request may have been sent just before B took the view');
  time.advance(500);
  m.handle(peer(B), joinRequest(B));
  assert.equal(m.isMaster, false);
  time.advance(500);
  m.handle(peer(B), joinRequest(B));
  assert.equal(m.isMaster, true, 'B kept asking for a heartbeat interval: it is not in this cluster, and M claims alone');
  assert.deepEqual(
    m.list.map((x) => x.uuid),
    [M.uuid],
  );
});

test('a heartbeat between two join requests shows the member took the view: it is not suspected', () => {
  const { m, time } = masterGoneOlderHeard();
  m.handle(peer(B), joinRequest(B)); // sent before it took the view, arriving late
  time.advance(600);
  m.handle(peer(B), heartbeat(A.uuid));
  time.advance(600);
  m.handle(peer(B), joinRequest(B)); // another late one: the count starts again
  assert.equal(m.isMaster, false);
  assert.equal(m.isMember(B.uuid), true);
});

test('a listed member asking to join while the master is still heard is not suspected', () => {
  const { m, time } = joinedMember(M, [A, B, M]);
  time.advance(1000);
  m.handle(peer(A), heartbeat(A.uuid));
  m.handle(peer(B), joinRequest(B));
  time.advance(1000);
  m.handle(peer(A), heartbeat(A.uuid));
  m.handle(peer(B), joinRequest(B));
  assert.equal(m.isMaster, false);
  assert.equal(m.isMember(B.uuid), true);
});

test('a confirmed migration commit counts as a heartbeat from its sender', () => {
  const master = testMembership(A);
  master.m.handle(peer(B), message('joinRequest', { member: B, cluster: { clusterId: '', dataMembers: 0, foundedAtMs: 0 }, reset: false }));
  master.time.advance(2000); // the join batch closes: B is admitted
  assert.equal(master.m.isMember(B.uuid), true);
  master.time.advance(4500); // B silent for 4.5 s of the 5 s allowed
  master.m.heardFrom(B.uuid);
  master.time.advance(4000);
  assert.equal(master.m.isMember(B.uuid), true, 'heard 4 s ago');
  master.time.advance(1500);
  assert.equal(master.m.isMember(B.uuid), false, 'silent 5.5 s since the last evidence: removed');
});

test('a member whose table the claimer did not take leaves and hands back instead of adopting the claimer\'s view', () => {
  const left: { reason: string; merging: boolean }[] = [];
  const { m, time, sent } = joinedMember(M, [A, C, M], () => 10, (reason, merging) => left.push({ reason, merging: merging === true }));
  time.advance(1000);
  m.handle(peer(C), heartbeat(A.uuid));
  time.advance(1700); // A silent for 2.7 s: more than half the heartbeat timeout, so C's claim is accepted
  m.handle(peer(C), message('claimRequest', { candidateUuid: C.uuid }));
  const answer = sent.filter((s) => s.m.kind === 'claimAnswer').at(-1);
  assert.equal((answer?.m.body as { accepted: boolean }).accepted, true);
  // C took over with a table older than the one M answered with (M's came from a master that had
  // removed C): taking C's view would leave M on table 10, above every table C makes.
  m.handle(peer(C), message('membersView', view([C, M], 6, 7)));
  assert.equal(m.joined, false);
  assert.equal(left.length, 1);
  assert.equal(left[0]?.merging, true, 'it hands back what it holds');
  assert.match(left[0]?.reason ?? '', /did not take this member's partition table \(version 10/);
});

test('a member whose table the claimer took adopts the claimer\'s view', () => {
  const left: string[] = [];
  const { m, time } = joinedMember(M, [A, C, M], () => 10, (reason) => left.push(reason));
  time.advance(1000);
  m.handle(peer(C), heartbeat(A.uuid));
  time.advance(1700);
  m.handle(peer(C), message('claimRequest', { candidateUuid: C.uuid }));
  m.handle(peer(C), message('membersView', view([C, M], 6, 11)));
  assert.deepEqual(left, []);
  assert.equal(m.joined, true);
  assert.equal(m.master?.uuid, C.uuid);
});
