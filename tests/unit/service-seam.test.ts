// The member-service seam (src/cluster/service.ts): every member-protocol message kind has exactly
// one owning service in a running member's routing table; the table refuses a second owner; events
// reach services in registration order; and the service rooms never import each other (they meet
// through the narrow interfaces the composition root, src/member/cluster-node.ts, passes in).
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { MESSAGE_TYPES, message, type MessageKind } from '../../src/cluster/messages.js';
import { ServiceTable, type MemberService } from '../../src/cluster/service.js';
import { REPO_ROOT } from '../harness/member-process.js';
import { sourceFiles as files } from '../harness/source-files.js';
import { ScenarioCluster, scenarioConfig } from '../harness/sim-cluster.js';
import { SimWorld } from '../harness/sim-world.js';

const SRC = path.join(REPO_ROOT, 'src');
/** Rooms whose code is a member service (or several): each works on its own. */
const SERVICE_ROOMS = ['replication', 'wan', 'operations', 'lifecycle', 'recovery', 'merge', 'cp', 'console'];
/** Rooms every service may build on (and the member room, which only wires, imports them all). */
const SHARED_ROOMS = ['util', 'config', 'cluster', 'partition', 'data', 'persistence', 'invocation'];

test('every message kind has exactly one owner in a member, and the owners are the services', () => {
  const world = new SimWorld(5, { delayMsMin: 1, delayMsMax: 2 });
  const cluster = new ScenarioCluster(world, scenarioConfig({}), ['10.0.0.1:5701'], 'seam');
  const node = (cluster.members[0] as { node: ScenarioCluster['members'][number]['node'] }).node;
  const kinds = Object.keys(MESSAGE_TYPES) as MessageKind[];
  const unowned = kinds.filter((k) => node.services.ownerOf(k) === null);
  assert.deepEqual(unowned, [], 'message kinds no service owns');
  assert.deepEqual(
    [...node.services.names],
    ['membership', 'migration', 'cluster-state', 'hot-backup', 'invocation', 'replication', 'wan', 'operations', 'leave', 'cluster-commands', 'recovery', 'metadata', 'hand-back', 'cp', 'console-views'],
    'the registration order is the order events reach the services (cluster/service.ts)',
  );
  assert.equal(node.services.ownerOf('invoke'), 'operations');
  assert.equal(node.services.ownerOf('invokeResult'), 'invocation');
  assert.equal(node.services.ownerOf('stateLock'), 'cluster-state');
  cluster.stop();
});

test('the routing table refuses a second owner of a kind and a service that owns kinds but handles none', () => {
  const t = new ServiceTable();
  t.register({ name: 'a', kinds: ['heartbeat'], handle: () => {} });
  assert.throws(() => t.register({ name: 'b', kinds: ['joinRequest', 'heartbeat'], handle: () => {} }), /heartbeat: owned by a and b/);
  assert.equal(t.ownerOf('joinRequest'), null, 'a refused service registers none of its kinds');
  assert.throws(() => t.register({ name: 'c', kinds: ['notMember'] }), /owns message kinds but handles none/);
  assert.throws(() => t.register({ name: 'a', kinds: [] }), /registered already/);
});

test('a message goes to its kind\'s owner only; events go to every service in registration order', () => {
  const t = new ServiceTable();
  const seen: string[] = [];
  const service = (name: string, kinds: MessageKind[]): MemberService => ({
    name,
    kinds,
    handle: (_from, m) => seen.push(`${name} handles ${m.kind}`),
    memberRemoved: (u) => seen.push(`${name} memberRemoved ${u}`),
  });
  t.register(service('first', ['heartbeat']));
  t.register({ name: 'quiet', kinds: [] });
  t.register(service('second', ['notMember']));
  const from = { uuid: 'u1', address: 'h:1' };
  assert.equal(t.route(from, message('notMember', { membersVersion: 1 })), true);
  assert.equal(t.route(from, message('pollCancel', { callId: 1 })), false, 'a kind nobody owns is not routed');
  t.emit('memberRemoved', 'x');
  assert.deepEqual(seen, ['second handles notMember', 'first memberRemoved x', 'second memberRemoved x']);
});

test('service rooms never import each other', () => {
  const bad: string[] = [];
  for (const room of SERVICE_ROOMS) {
    for (const file of files(path.join(SRC, room))) {
      const text = fs.readFileSync(file, 'utf8');
      for (const m of text.matchAll(/from '(\.\.\/[^']+)'/g)) {
        const target = path.relative(SRC, path.resolve(path.dirname(file), m[1] as string)).split(path.sep)[0] as string;
        if (target === room) continue;
        if (!SHARED_ROOMS.includes(target)) bad.push(`${path.relative(REPO_ROOT, file)} imports ${m[1]}`);
      }
    }
  }
  assert.deepEqual(bad, []);
});

test('no file under src/ is over 800 lines, except the HTTP parser', () => {
  const long = files(SRC)
    .filter((f) => !f.endsWith(path.join('http', 'parser.ts')))
    .map((f) => [path.relative(REPO_ROOT, f), fs.readFileSync(f, 'utf8').split('\n').length] as const)
    .filter(([, n]) => n > 800)
    .map(([f, n]) => `${f}: ${n} lines`);
  assert.deepEqual(long, []);
});
