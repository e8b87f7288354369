// The METADATA leader evens out leaderships (src/cp/metadata-duties.ts), but never toward a CP
// member whose process is gone: a crashed member leads nothing, so it looked like the best target,
// and a leadership transfer to it stalled the group's writes until the transfer timed out, once a
// round (cp-rest.test.ts: removing that member over REST waited 8.8 s, past the caller's 10 s in 3
// of 6 runs).
import test from 'node:test';
import assert from 'node:assert/strict';
import { MetadataDuties, type DutiesHost } from '../../src/cp/metadata-duties.js';
import type { CpGroupInfo, CpMember, CpMetadata } from '../../src/cp/metadata.js';
import { Logger } from '../../src/util/logger.js';

const member = (n: number): CpMember => ({ uuid: `cp-${n}`, address: `10.0.0.${n}:5701`, memberUuid: `m-${n}` });
const A = member(1);
const B = member(2);
const C = member(3);

function duties(present: (m: CpMember) => boolean, leaders: Readonly<Record<string, string>>): { moves: string[]; run: () => void } {
  const moves: string[] = [];
  const host: DutiesHost = {
    discovery: () => null,
    call: (group, payload, done) => {
      if (payload.kind === 'read') done({ ok: true, result: { value: { type: 'status', leader: leaders[group] ?? null }, index: 1 } } as never);
      else if (payload.kind === 'change') moves.push(`${group} → ${(payload.change as { lead: string }).lead}`);
    },
    present,
    cpMembers: () => [A, B, C],
    addressOfCp: (u) => u,
    autoRemovalMs: 14_400_000,
    rebalanceMs: 1000,
    log: new Logger('OFF', 'text', { write: () => {} }).component('cp'),
  };
  const groups: CpGroupInfo[] = ['g1', 'g2', 'g3'].map((name, id) => ({ name, id, seed: 0, members: [A.uuid, B.uuid, C.uuid], status: 'ACTIVE' }));
  const meta = { isInitialized: () => true, groupList: () => groups, nextChange: () => null, cpMembers: () => [A, B, C] } as unknown as CpMetadata;
  const d = new MetadataDuties(host);
  return { moves, run: () => d.run(meta, 10_000, () => {}) };
}

test('a CP member that leads two more groups than another hands one over', () => {
  const { moves, run } = duties(() => true, { g1: A.uuid, g2: A.uuid, g3: B.uuid });
  run();
  assert.deepEqual(moves, ['g1 → cp-3']);
});

test('a CP member whose process left the cluster is never handed a leadership', () => {
  const { moves, run } = duties((m) => m.uuid !== C.uuid, { g1: A.uuid, g2: A.uuid, g3: B.uuid });
  run();
  assert.deepEqual(moves, [], 'A leads 2, B leads 1: even among the members present');
});
