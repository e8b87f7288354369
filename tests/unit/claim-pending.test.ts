// While a member claims mastership, or has accepted another member's claim and waits for its view,
// it confirms no migration of its old master (src/cluster/mastership-claim.ts, claimPending; seed
// 2077691 with --overlap in the simulation).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MastershipClaim, type ClaimHost } from '../../src/cluster/mastership-claim.js';
import type { MemberWire, Message, ViewWire } from '../../src/cluster/messages.js';
import { PartitionTable } from '../../src/partition/table.js';
import { Logger } from '../../src/util/logger.js';

const member = (uuid: string, port: number): MemberWire => ({ uuid, host: '10.0.0.1', port, lite: false, version: '0.1.0' });
const A = member('a', 5701);
const B = member('b', 5702);
const C = member('c', 5703);
const TIMEOUT_MS = 5000;
const MAX_NO_HEARTBEAT_MS = 10_000;

function setup(self: MemberWire): { claim: MastershipClaim; clock: { now: number }; sent: Message[]; suspects: Set<string> } {
  const clock = { now: 100_000 };
  const sent: Message[] = [];
  const suspects = new Set<string>();
  const host: ClaimHost = {
    self,
    members: () => [A, B, C],
    isMaster: () => false,
    isSuspect: (u) => suspects.has(u),
    addressOfUuid: (u) => [A, B, C].find((m) => m.uuid === u)?.port.toString() ?? null,
    silentSinceMs: (u) => (suspects.has(u) ? clock.now - 2 * MAX_NO_HEARTBEAT_MS : clock.now),
    tableVersion: () => 8,
    takeOver: () => {},
    counters: { claims: 0 },
  };
  const transport = { send: (_a: string, m: Message) => (sent.push(m), true), disconnect: () => {}, connectionCount: () => 0 };
  const claim = new MastershipClaim(host, TIMEOUT_MS, MAX_NO_HEARTBEAT_MS, transport, { nowMs: () => clock.now, monotonicMs: () => clock.now }, new Logger('OFF', 'text', { write: () => {} }).component('test'));
  return { claim, clock, sent, suspects };
}

const view = (): ViewWire => ({ clusterId: 'x', foundedAtMs: 0, membersVersion: 3, members: [A, B, C], table: new PartitionTable(8, 2, [['a', null]], [8]).toWire(), clusterState: 0, migrationQueue: 0 });

test('a member that accepted a claim holds off its old master until the claimant can have taken over, then no longer', () => {
  const { claim, clock, sent, suspects } = setup(C);
  assert.equal(claim.claimPending(clock.now), false);
  suspects.add('a');
  claim.answer({ uuid: 'b', address: '5702' }, { kind: 'claimRequest', callId: 1, body: { candidateUuid: 'b' } } as Message & { kind: 'claimRequest' }, view());
  assert.equal((sent[0] as Message & { kind: 'claimAnswer' }).body.accepted, true);
  assert.equal(claim.claimPending(clock.now), true);
  clock.now += 2 * TIMEOUT_MS - 1;
  assert.equal(claim.claimPending(clock.now), true);
  // A claim that failed (one refusal ends it) must not stall the old master's migrations for ever.
  clock.now += 1;
  assert.equal(claim.claimPending(clock.now), false);
});

test('a refused claim leaves nothing pending; the claimant itself is pending while it claims', () => {
  const refuser = setup(C);
  refuser.claim.answer({ uuid: 'b', address: '5702' }, { kind: 'claimRequest', callId: 1, body: { candidateUuid: 'b' } } as Message & { kind: 'claimRequest' }, view());
  assert.equal((refuser.sent[0] as Message & { kind: 'claimAnswer' }).body.accepted, false);
  assert.equal(refuser.claim.claimPending(refuser.clock.now), false);

  const claimant = setup(B);
  claimant.suspects.add('a');
  claimant.claim.maybeStart();
  assert.equal(claimant.sent[0]?.kind, 'claimRequest');
  assert.equal(claimant.claim.claimPending(claimant.clock.now), true);
  claimant.claim.onAnswer({ uuid: 'c', address: '5703' }, { kind: 'claimAnswer', callId: 1, body: { accepted: true, view: view() } } as Message & { kind: 'claimAnswer' });
  assert.equal(claimant.claim.claimPending(claimant.clock.now), false);
});
