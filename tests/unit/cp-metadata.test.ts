// The METADATA state machine (src/cp/metadata.ts): discovery makes METADATA and default at once,
// placement spreads group memberships evenly, membership changes are proposed one member at a
// time (removals first), a destroyed name can be created again with a new id, a snapshot restores
// it all, and `name@group` parses as spec/cp.md says.
import test from 'node:test';
import assert from 'node:assert/strict';
import { CpMetadata, DEFAULT_GROUP, METADATA, parseCpName } from '../../src/cp/metadata.js';

const members = (n: number): { uuid: string; address: string; memberUuid: string }[] => Array.from({ length: n }, (_, i) => ({ uuid: `cp-${i + 1}`, address: `127.0.0.1:${5701 + i}`, memberUuid: `m-${i + 1}` }));

test('discovery: METADATA and default exist from the start; nothing else is served before it', () => {
  const m = new CpMetadata(7);
  assert.equal(m.apply({ kind: 'createGroup', name: 'x' }).ok, false);
  assert.deepEqual(m.apply({ kind: 'init', members: members(2), groupSize: 3 }).ok, false, 'too few CP members');
  assert.equal(m.apply({ kind: 'init', members: members(5), groupSize: 3 }).ok, true);
  assert.deepEqual(m.groupList().map((g) => [g.name, g.id, g.seed]), [[METADATA, 0, 7], [DEFAULT_GROUP, 1, 7]]);
  assert.deepEqual(m.group(METADATA)?.members, ['cp-1', 'cp-2', 'cp-3']);
  assert.deepEqual(m.group(DEFAULT_GROUP)?.members, ['cp-4', 'cp-5', 'cp-1'], 'spread: the members in the fewest groups first');
  assert.equal(m.apply({ kind: 'init', members: members(3), groupSize: 3 }).ok, true, 'a second init changes nothing');
  assert.equal(m.cpMembers().length, 5);
});

test('placement spreads memberships evenly over the CP members', () => {
  const m = new CpMetadata(1);
  m.apply({ kind: 'init', members: members(5), groupSize: 3 });
  for (let i = 0; i < 8; i++) m.apply({ kind: 'createGroup', name: `g${i}` });
  const load = new Map<string, number>();
  for (const g of m.groupList()) for (const u of g.members) load.set(u, (load.get(u) ?? 0) + 1);
  const counts = [...load.values()];
  assert.ok(Math.max(...counts) - Math.min(...counts) <= 1, `even: ${JSON.stringify([...load])}`);
  const again = m.apply({ kind: 'createGroup', name: 'g3' });
  assert.equal(again.ok && again.group?.id, m.group('g3')?.id, 'creating an existing group answers it');
});

test('membership: a removed CP member leaves its groups first, then a substitute joins, one at a time', () => {
  const m = new CpMetadata(1);
  m.apply({ kind: 'init', members: members(4), groupSize: 3 });
  assert.equal(m.nextChange(METADATA), null);
  m.apply({ kind: 'removeMember', uuid: 'cp-2' });
  assert.deepEqual(m.nextChange(METADATA), { remove: 'cp-2' });
  m.apply({ kind: 'groupMembers', name: METADATA, id: 0, members: ['cp-1', 'cp-3'] });
  assert.deepEqual(m.nextChange(METADATA), { add: 'cp-4' });
  m.apply({ kind: 'groupMembers', name: METADATA, id: 0, members: ['cp-1', 'cp-3', 'cp-4'] });
  assert.equal(m.nextChange(METADATA), null);
  assert.equal(m.apply({ kind: 'removeMember', uuid: 'nobody' }).ok, false);
  assert.equal(m.apply({ kind: 'groupMembers', name: METADATA, id: 9, members: [] }).ok, false, 'a stale group id is refused');
});

test('destroy: METADATA cannot go; a destroyed name comes back with a new id', () => {
  const m = new CpMetadata(1);
  m.apply({ kind: 'init', members: members(3), groupSize: 3 });
  const first = m.apply({ kind: 'createGroup', name: 'orders' });
  assert.equal(m.apply({ kind: 'destroyGroup', name: METADATA }).ok, false);
  assert.equal(m.apply({ kind: 'destroyGroup', name: 'orders' }).ok, true);
  assert.equal(m.group('orders'), undefined);
  const second = m.apply({ kind: 'createGroup', name: 'orders' });
  assert.ok(first.ok && second.ok && (second.group?.id ?? 0) > (first.group?.id ?? 0));
});

test('a snapshot restores members, groups and the next id', () => {
  const m = new CpMetadata(3);
  m.apply({ kind: 'init', members: members(5), groupSize: 3 });
  m.apply({ kind: 'createGroup', name: 'a' });
  const copy = new CpMetadata(3);
  copy.restore(m.snapshot());
  assert.deepEqual(copy.groupList(), m.groupList());
  assert.deepEqual(copy.cpMembers(), m.cpMembers());
  const b1 = m.apply({ kind: 'createGroup', name: 'b' });
  const b2 = copy.apply({ kind: 'createGroup', name: 'b' });
  assert.deepEqual(b1, b2);
});

test('name@group: one @ at most, trimmed, @default stripped in any case, @METADATA refused', () => {
  assert.deepEqual(parseCpName('counter'), { object: 'counter', group: DEFAULT_GROUP });
  assert.deepEqual(parseCpName(' counter @ orders '), { object: 'counter', group: 'orders' });
  assert.deepEqual(parseCpName('counter@DeFault'), { object: 'counter', group: DEFAULT_GROUP });
  assert.ok('error' in parseCpName('a@b@c'));
  assert.ok('error' in parseCpName('a@metadata'));
  assert.ok('error' in parseCpName('@orders'));
  assert.ok('error' in parseCpName('   '));
});
