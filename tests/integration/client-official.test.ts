// The official Node.js client (`hazelcast-client`, a dev dependency: README "Tests") against real
// members: it connects to a 3-member cluster with smart routing, authenticates on every member,
// learns the three members and a partition table of 271 partitions owned by them, and shuts down
// cleanly; the calls served so far (docs/client.md) see the same data as REST on every member, in
// both directions, with the value mapping of spec/client.md. A wrong cluster name makes it give up.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { clusterOf, freePorts, startClusterMembers, until, sizeIs, waitSettled } from '../harness/cluster.js';
import { request } from '../harness/raw-http.js';

interface HzMember {
  readonly uuid: { toString(): string };
  readonly address: { readonly port: number };
}
interface HzClient {
  getCluster(): { getMembers(): HzMember[] };
  getPartitionService(): { getPartitionCount(): number; getPartitionOwner(partitionId: number): { toString(): string } | undefined };
  getMap(name: string): Promise<HzMap>;
  getQueue(name: string): Promise<HzQueue>;
  shutdown(): Promise<void>;
}
interface HzMap {
  put(key: unknown, value: unknown): Promise<unknown>;
  putIfAbsent(key: unknown, value: unknown): Promise<unknown>;
  remove(key: unknown): Promise<unknown>;
  size(): Promise<number>;
  isEmpty(): Promise<boolean>;
  getAll(keys: unknown[]): Promise<[unknown, unknown][]>;
  putAll(entries: [unknown, unknown][]): Promise<void>;
  replace(key: unknown, value: unknown): Promise<unknown>;
  set(key: unknown, value: unknown, ttl?: number): Promise<void>;
  get(key: unknown): Promise<unknown>;
  containsKey(key: unknown): Promise<boolean>;
  delete(key: unknown): Promise<void>;
  clear(): Promise<void>;
}
interface HzQueue {
  offer(item: unknown): Promise<boolean>;
  poll(timeoutMillis?: number): Promise<unknown>;
  size(): Promise<number>;
  isEmpty(): Promise<boolean>;
  take(): Promise<unknown>;
  peek(): Promise<unknown>;
}
interface HzModule {
  Client: { newHazelcastClient(config: unknown): Promise<HzClient> };
}

const hz = createRequire(import.meta.url)('hazelcast-client') as HzModule;

function clientConfig(ports: readonly number[], clusterName = 'dev', connectTimeoutMs = 20_000): unknown {
  return {
    clusterName,
    network: { clusterMembers: ports.map((p) => `127.0.0.1:${p}`), connectionTimeout: 5000 },
    connectionStrategy: { connectionRetry: { clusterConnectTimeoutMillis: connectTimeoutMs } },
    properties: { 'hazelcast.logging.level': 'OFF' },
  };
}

test('the Node client connects to three members with smart routing and sees the cluster', { timeout: 120_000 }, async () => {
  const ports = await freePorts(3);
  const members = await startClusterMembers(ports);
  let client: HzClient | null = null;
  try {
    await waitSettled(ports, 3, 30_000);
    const view = await clusterOf(ports[0]!);
    client = await hz.Client.newHazelcastClient(clientConfig(ports.slice(0, 1)));
    const seen = client.getCluster().getMembers();
    assert.deepEqual(seen.map((m) => m.uuid.toString()), view.members.map((m) => m.uuid));
    assert.deepEqual(seen.map((m) => m.address.port).sort(), [...ports].sort());
    const partitions = client.getPartitionService();
    await until('a partition table', 10_000, async () => (partitions.getPartitionOwner(0) !== undefined ? true : null));
    assert.equal(partitions.getPartitionCount(), 271);
    const memberUuids = new Set(view.members.map((m) => m.uuid));
    for (let p = 0; p < 271; p++) assert.ok(memberUuids.has(String(partitions.getPartitionOwner(p))), `partition ${p}`);
    // Smart routing: the client opens a connection to every member.
    await until('a client connection on every member', 20_000, async () => (members.every((m) => /client NJS '[^']+' 5\.6\.0 connected/.test(m.stdout())) ? true : null));
    const map = await client.getMap('m');
    // Client writes, REST reads on every member: a String is text/plain UTF-8.
    const keys = Array.from({ length: 40 }, (_, i) => `key-${i}-é`);
    for (const k of keys) await map.set(k, `value of ${k}`);
    for (const port of ports) {
      for (const k of keys.slice(0, 10)) {
        const answer = await request(port, 'GET', `/grid/rest/maps/m/${encodeURIComponent(k)}`);
        assert.equal(answer.status, 200);
        assert.equal(answer.body.toString('utf8'), `value of ${k}`);
        assert.equal(answer.headers['content-type'], 'text/plain; charset=utf-8');
      }
    }
    // REST writes, the client reads: text as String, JSON as JSON, other types as bytes.
    assert.equal((await request(ports[1]!, 'POST', '/grid/rest/maps/m/text', { body: 'hello', headers: { 'content-type': 'text/plain' } })).status, 200);
    assert.equal((await request(ports[2]!, 'POST', '/grid/rest/maps/m/json', { body: '{"a":1}', headers: { 'content-type': 'application/json' } })).status, 200);
    assert.equal((await request(ports[0]!, 'POST', '/grid/rest/maps/m/bytes', { body: Buffer.from([0xff, 0, 1]), headers: { 'content-type': 'application/octet-stream' } })).status, 200);
    assert.equal(await map.get('text'), 'hello');
    assert.deepEqual(await map.get('json'), { a: 1 });
    assert.deepEqual(Buffer.from((await map.get('bytes')) as Buffer), Buffer.from([0xff, 0, 1]));
    assert.equal(await map.get('absent'), null);
    assert.equal(await map.containsKey('text'), true);
    await map.delete('text');
    assert.equal(await map.containsKey('text'), false);
    assert.equal((await request(ports[2]!, 'GET', '/grid/rest/maps/m/text')).status, 204);
    // Keys are strings: a number key is refused, saying so.
    await assert.rejects(map.set(42, 'x'), /Grid keys are strings/);
    // A TTL per entry is refused rather than ignored.
    await assert.rejects(map.set('k', 'v', 5000), /TTL per entry/);
    // put, remove and putIfAbsent answer the old value; REST sees each write.
    assert.equal(await map.put('old', 'one'), null);
    assert.equal(await map.put('old', 'two'), 'one');
    assert.equal((await request(ports[2]!, 'GET', '/grid/rest/maps/m/old')).body.toString(), 'two');
    assert.equal(await map.putIfAbsent('old', 'three'), 'two');
    assert.equal(await map.putIfAbsent('new', 'four'), null);
    assert.equal((await request(ports[1]!, 'GET', '/grid/rest/maps/m/new')).body.toString(), 'four');
    assert.equal(await map.remove('old'), 'two');
    assert.equal(await map.remove('old'), null);
    assert.equal((await request(ports[0]!, 'GET', '/grid/rest/maps/m/old')).status, 204);
    // getAll and putAll: keys on every member's partitions, absent ones left out.
    await map.putAll([['pa-1', 'one'], ['pa-2', 'two'], ['pa-3', 'three']]);
    assert.equal((await request(ports[1]!, 'GET', '/grid/rest/maps/m/pa-2')).body.toString(), 'two');
    const all = await map.getAll(['pa-1', 'pa-3', 'absent', 'json']);
    assert.deepEqual(new Map(all), new Map<unknown, unknown>([['pa-1', 'one'], ['pa-3', 'three'], ['json', { a: 1 }]]));
    for (const k of ['pa-1', 'pa-2', 'pa-3']) await map.delete(k);
    // Size counts the whole cluster's entries.
    assert.equal(await map.size(), keys.length + 3);
    assert.equal(await map.isEmpty(), false);
    // Calls not served yet are named in the error.
    await assert.rejects(map.replace('new', 'x'), /0x010400 is not supported/);
    // Queues, interleaved with REST.
    const queue = await client.getQueue('q');
    assert.equal(await queue.offer('first'), true);
    assert.equal(await queue.peek(), 'first', 'peek leaves the item');
    assert.equal((await request(ports[1]!, 'POST', '/grid/rest/queues/q', { body: 'second', headers: { 'content-type': 'text/plain' } })).status, 200);
    assert.equal(await queue.size(), 2);
    const head = await request(ports[2]!, 'GET', '/grid/rest/queues/q/0');
    assert.equal(head.body.toString(), 'first');
    assert.equal(await queue.poll(), 'second');
    assert.equal(await queue.isEmpty(), true);
    assert.equal(await queue.poll(200), null);
    const taken = queue.take();
    assert.equal((await request(ports[0]!, 'POST', '/grid/rest/queues/q', { body: 'third', headers: { 'content-type': 'text/plain' } })).status, 200);
    assert.equal(await taken, 'third');
    await map.clear();
    assert.equal((await request(ports[0]!, 'GET', `/grid/rest/maps/m/${encodeURIComponent(keys[0]!)}`)).status, 204);
    await client.shutdown();
    client = null;
  } finally {
    if (client !== null) await client.shutdown().catch(() => null);
    await Promise.all(members.map((m) => m.stop('SIGKILL', 5000).catch(() => null)));
  }
});

test('kill -9 of a member under a client writer: every acknowledged write is read back', { timeout: 180_000 }, async (t) => {
  const ports = await freePorts(3);
  const members = await startClusterMembers(ports);
  let client: HzClient | null = null;
  try {
    await waitSettled(ports, 3, 30_000);
    client = await hz.Client.newHazelcastClient(clientConfig(ports));
    const map = await client.getMap('kw');
    // Four writers, each writing its own keys in order: an acknowledged set is recorded, a failed one
    // only attempted (its answer may have been lost after the write).
    const acked = new Map<string, string>();
    let failures = 0;
    let stop = false;
    let sequence = 0;
    const writer = async (w: number): Promise<void> => {
      while (!stop) {
        const i = sequence++;
        const key = `w${w}-k${i % 500}`;
        const value = `v${i}`;
        try {
          await map.set(key, value);
          acked.set(key, value);
        } catch {
          failures++;
          acked.delete(key); // the last attempt may or may not have landed: not judged
        }
      }
    };
    const writers = [0, 1, 2, 3].map((w) => writer(w));
    await until('1000 acknowledged writes', 30_000, async () => (acked.size >= 1000 ? true : null));
    members[2]!.child.kill('SIGKILL');
    await members[2]!.waitForExit();
    await until('two members', 30_000, () => sizeIs(ports.slice(0, 2), 2));
    const afterRemoval = sequence;
    await until('writes after the removal', 30_000, async () => (sequence > afterRemoval + 1000 ? true : null));
    stop = true;
    await Promise.all(writers);
    await waitSettled(ports.slice(0, 2), 2, 60_000);
    t.diagnostic(`attempted ${sequence}, judged ${acked.size}, failed ${failures}`);
    for (const [key, value] of acked) {
      const answer = await request(ports[(key.length % 2)]!, 'GET', `/grid/rest/maps/kw/${key}`);
      assert.equal(answer.body.toString(), value, `${key} acknowledged as ${value}`);
    }
    assert.ok(acked.size >= 1000);
    await client.shutdown();
    client = null;
  } finally {
    if (client !== null) await client.shutdown().catch(() => null);
    await Promise.all(members.map((m) => m.stop('SIGKILL', 5000).catch(() => null)));
  }
});

test('a wrong cluster name: the client gives up, the member keeps serving', { timeout: 60_000 }, async () => {
  const [port] = await freePorts(1);
  const [member] = await startClusterMembers([port!]);
  try {
    await until('joined', 20_000, () => sizeIs([port!], 1));
    await assert.rejects(hz.Client.newHazelcastClient(clientConfig([port!], 'not-dev', 3000)), /Unable to connect|cluster/i);
    assert.equal((await request(port!, 'GET', '/grid/health/ready')).status, 200);
    assert.match(member!.stdout(), /refused the client NJS '[^']+' from 127\.0\.0\.1:\d+: cluster name 'not-dev' is not this cluster's/);
  } finally {
    await member!.stop('SIGKILL', 5000).catch(() => null);
  }
});
