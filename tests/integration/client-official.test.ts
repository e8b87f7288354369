// The official Node.js client (`hazelcast-client`, a dev dependency: README "Development tools") against real
// members: it connects to a 3-member cluster with smart routing, authenticates on every member,
// learns the three members and a partition table of 271 partitions owned by them, and shuts down
// cleanly; every map and queue call of spec/client.md sees the same data as REST on every member, in
// both directions, with the value mapping of spec/client.md. Several clients share queues with REST,
// a joining member is picked up, a member killed under writers loses no acknowledged write, a member
// shut down gracefully under writers fails no call, a split-brain merge moves the client to the
// merged cluster, client writes reach a WAN target (with an entry's own TTL) and the persistence
// log, and a wrong cluster name makes the client give up.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { clusterOf, freePorts, memberXml, startClusterMember, startClusterMembers, until, sizeIs, waitSettled } from '../harness/cluster.js';
import { request } from '../harness/raw-http.js';
import { startMember, type MemberProcess } from '../harness/member-process.js';
import { getEntry, startWanCluster } from '../harness/wan.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

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
  put(key: unknown, value: unknown, ttl?: number, maxIdle?: number): Promise<unknown>;
  putIfAbsent(key: unknown, value: unknown): Promise<unknown>;
  size(): Promise<number>;
  isEmpty(): Promise<boolean>;
  getAll(keys: unknown[]): Promise<[unknown, unknown][]>;
  putAll(entries: [unknown, unknown][]): Promise<void>;
  replace(key: unknown, value: unknown): Promise<unknown>;
  replaceIfSame(key: unknown, oldValue: unknown, newValue: unknown): Promise<boolean>;
  remove(key: unknown, value?: unknown): Promise<unknown>;
  keySet(): Promise<unknown[]>;
  values(): Promise<{ toArray(): unknown[] }>;
  entrySet(): Promise<[unknown, unknown][]>;
  set(key: unknown, value: unknown, ttl?: number, maxIdle?: number): Promise<void>;
  get(key: unknown): Promise<unknown>;
  containsKey(key: unknown): Promise<boolean>;
  delete(key: unknown): Promise<void>;
  clear(): Promise<void>;
}
interface HzQueue {
  offer(item: unknown, timeoutMillis?: number): Promise<boolean>;
  put(item: unknown): Promise<void>;
  clear(): Promise<void>;
  drainTo(into: unknown[], maxElements?: number): Promise<number>;
  poll(timeoutMillis?: number): Promise<unknown>;
  size(): Promise<number>;
  isEmpty(): Promise<boolean>;
  take(): Promise<unknown>;
  peek(): Promise<unknown>;
}
interface HzModule {
  Client: { newHazelcastClient(config: unknown): Promise<HzClient> };
  HazelcastJsonValue: new (json: string) => unknown;
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
  const members = await startClusterMembers(ports, { queues: { bounded: { backupCount: 1, maxSize: 1 } } });
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
    // An entry's own TTL: REST on other members reads it, then it is gone everywhere.
    await map.set('ttl-key', 'short-lived', 1500);
    assert.equal((await request(ports[1]!, 'GET', '/grid/rest/maps/m/ttl-key')).body.toString(), 'short-lived');
    await until('the entry gone at its TTL', 15_000, async () => ((await request(ports[2]!, 'GET', '/grid/rest/maps/m/ttl-key')).status === 204 ? true : null));
    assert.equal(await map.get('ttl-key'), null);
    // Its own max-idle (and no TTL): reads keep it, idleness ends it.
    assert.equal(await map.put('idle-key', 'idle', 0, 1200), null);
    for (let i = 0; i < 4; i++) {
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(await map.get('idle-key'), 'idle', 'read within its max-idle');
    }
    // Every read counts as access (a REST poll would keep it alive): one read after a quiet spell.
    await new Promise((r) => setTimeout(r, 1700));
    assert.equal((await request(ports[0]!, 'GET', '/grid/rest/maps/m/idle-key')).status, 204, 'gone after 1.2 s without a read');
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
    // replace writes only a present key; the IfSame calls compare what a client reads.
    assert.equal(await map.replace('absent', 'x'), null);
    assert.equal((await request(ports[1]!, 'GET', '/grid/rest/maps/m/absent')).status, 204);
    assert.equal(await map.replace('new', 'five'), 'four');
    assert.equal(await map.replaceIfSame('new', 'four', 'six'), false);
    assert.equal(await map.replaceIfSame('new', 'five', 'six'), true);
    assert.equal((await request(ports[2]!, 'GET', '/grid/rest/maps/m/new')).body.toString(), 'six');
    assert.equal((await request(ports[0]!, 'POST', '/grid/rest/maps/m/rest-text', { body: 'same', headers: { 'content-type': 'text/plain' } })).status, 200);
    assert.equal(await map.remove('rest-text', 'other'), false);
    assert.equal(await map.remove('rest-text', 'same'), true, 'REST text/plain and a client String are the same value');
    assert.equal((await request(ports[1]!, 'GET', '/grid/rest/maps/m/rest-text')).status, 204);
    // Whole-map reads see every member's partitions, REST's entries among them.
    const keySet = await map.keySet();
    assert.deepEqual([...keySet].sort(), [...keys, 'bytes', 'json', 'new'].sort());
    const values = (await map.values()).toArray();
    assert.equal(values.length, keySet.length);
    assert.ok(values.some((v) => typeof v === 'object' && v !== null && (v as { a?: number }).a === 1), 'the JSON value');
    const entries = new Map(await map.entrySet());
    assert.equal(entries.size, keySet.length);
    assert.equal(entries.get('new'), 'six');
    assert.equal(entries.get(keys[3]), `value of ${keys[3]}`);
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
    // put, clear and drainTo, with REST's items in the same queue.
    await queue.put('p1');
    for (const item of ['r1', 'r2', 'r3']) assert.equal((await request(ports[2]!, 'POST', '/grid/rest/queues/q', { body: item, headers: { 'content-type': 'text/plain' } })).status, 200);
    const drained: unknown[] = [];
    assert.equal(await queue.drainTo(drained, 2), 2);
    assert.deepEqual(drained, ['p1', 'r1']);
    assert.equal(await queue.drainTo(drained), 2);
    assert.deepEqual(drained, ['p1', 'r1', 'r2', 'r3']);
    assert.equal(await queue.isEmpty(), true);
    for (const item of ['c1', 'c2']) await queue.offer(item);
    await queue.clear();
    assert.equal((await request(ports[1]!, 'GET', '/grid/rest/queues/q/size')).body.toString(), '0');
    // A bounded queue: offer with a timeout waits for the room a REST poll makes.
    const bounded = await client.getQueue('bounded');
    assert.equal(await bounded.offer('b1'), true);
    assert.equal(await bounded.offer('b2'), false, 'full, no wait');
    const started = Date.now();
    assert.equal(await bounded.offer('b2', 300), false, 'still full after its timeout');
    assert.ok(Date.now() - started >= 250, 'it waited');
    const waiting = bounded.offer('b2', 20_000);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal((await request(ports[0]!, 'GET', '/grid/rest/queues/bounded/0')).body.toString(), 'b1');
    assert.equal(await waiting, true);
    assert.equal(await bounded.poll(), 'b2');
    await map.clear();
    assert.equal((await request(ports[0]!, 'GET', `/grid/rest/maps/m/${encodeURIComponent(keys[0]!)}`)).status, 204);
    await client.shutdown();
    client = null;
  } finally {
    if (client !== null) await client.shutdown().catch(() => null);
    await Promise.all(members.map((m) => m.stop('SIGKILL', 5000).catch(() => null)));
  }
});

test('three clients and REST share a queue while a member joins: every item taken once, in order, and the client picks the new member up', { timeout: 180_000 }, async (t) => {
  const ports = await freePorts(3);
  const members = await startClusterMembers(ports.slice(0, 2));
  const clients: HzClient[] = [];
  try {
    await waitSettled(ports.slice(0, 2), 2, 30_000);
    for (let i = 0; i < 3; i++) clients.push(await hz.Client.newHazelcastClient(clientConfig(ports.slice(0, 1))));
    const queues = await Promise.all(clients.map((c) => c.getQueue('shared')));
    const perProducer = 150;
    const taken: { consumer: string; item: string }[] = [];
    let producing = 3;
    // Producers: two clients and REST, each in its own order.
    const produce = async (name: string, offer: (item: string) => Promise<void>): Promise<void> => {
      for (let i = 0; i < perProducer; i++) await offer(`${name}-${i}`);
      producing--;
    };
    const restOffer = async (item: string): Promise<void> => {
      const answer = await request(ports[1]!, 'POST', '/grid/rest/queues/shared', { body: item, headers: { 'content-type': 'text/plain' } });
      assert.equal(answer.status, 200);
    };
    // Consumers: the third client with waiting polls, the first with drainTo, REST with polls.
    const consume = async (consumer: string, takeSome: () => Promise<string[]>): Promise<void> => {
      while (producing > 0 || taken.length < 3 * perProducer) {
        const items = await takeSome();
        for (const item of items) taken.push({ consumer, item });
        if (items.length === 0 && producing === 0 && taken.length >= 3 * perProducer) break;
      }
    };
    let joined: Promise<void> | null = null;
    const work = Promise.all([
      produce('a', async (item) => void assert.equal(await queues[0]!.offer(item), true)),
      produce('b', async (item) => {
        await queues[1]!.put(item);
        // Halfway through, a third member joins: partitions (this queue's perhaps) move under the calls.
        if (item === `b-${perProducer / 2}`) joined = startClusterMember(ports[2]!, ports).then((m) => void members.push(m));
      }),
      produce('r', restOffer),
      consume('poller', async () => {
        const v = await queues[2]!.poll(200);
        return v === null ? [] : [v as string];
      }),
      consume('drainer', async () => {
        const into: string[] = [];
        await queues[0]!.drainTo(into, 5);
        if (into.length === 0) await new Promise((r) => setTimeout(r, 20));
        return into;
      }),
      consume('rest', async () => {
        const answer = await request(ports[0]!, 'DELETE', '/grid/rest/queues/shared/0');
        if (answer.status === 204) await new Promise((r) => setTimeout(r, 20));
        return answer.status === 200 ? [answer.body.toString()] : [];
      }),
    ]);
    await until('every item taken', 120_000, async () => (taken.length >= 3 * perProducer && producing === 0 ? true : null));
    await work;
    await joined;
    const items = taken.map((x) => x.item);
    assert.equal(new Set(items).size, items.length, 'no item taken twice');
    assert.deepEqual([...items].sort(), ['a', 'b', 'r'].flatMap((n) => Array.from({ length: perProducer }, (_, i) => `${n}-${i}`)).sort(), 'every item taken');
    // FIFO: each consumer sees each producer's items in the order they were offered.
    for (const consumer of ['poller', 'drainer', 'rest']) {
      for (const producer of ['a', 'b', 'r']) {
        const seq = taken.filter((x) => x.consumer === consumer && x.item.startsWith(`${producer}-`)).map((x) => Number(x.item.slice(2)));
        assert.deepEqual(seq, [...seq].sort((x, y) => x - y), `${consumer} took ${producer}'s items in order`);
      }
    }
    t.diagnostic(`taken by consumer: ${['poller', 'drainer', 'rest'].map((c) => `${c} ${taken.filter((x) => x.consumer === c).length}`).join(', ')}`);
    // The joined member: every client lists it, opens a connection to it, and sees it own partitions.
    await waitSettled(ports, 3, 60_000);
    const view = await clusterOf(ports[2]!);
    for (const client of clients) {
      await until('the client lists three members', 20_000, async () => (client.getCluster().getMembers().length === 3 ? true : null));
      assert.deepEqual(client.getCluster().getMembers().map((m) => m.uuid.toString()).sort(), view.members.map((m) => m.uuid).sort());
    }
    const newcomer = view.members.find((m) => m.localMember)!.uuid;
    await until('the new member owns partitions in the client\'s table', 20_000, async () => {
      const ps = clients[0]!.getPartitionService();
      for (let p = 0; p < 271; p++) if (String(ps.getPartitionOwner(p)) === newcomer) return true;
      return null;
    });
    await until('client connections on the new member', 20_000, async () => ((members[2]!.stdout().match(/client NJS '[^']+' 5\.6\.0 connected/g) ?? []).length >= 3 ? true : null));
    // And calls keep landing everywhere: written by a client, read by REST on the new member.
    const map = await clients[1]!.getMap('after-join');
    for (let i = 0; i < 50; i++) await map.set(`k${i}`, `v${i}`);
    for (let i = 0; i < 50; i += 7) assert.equal((await request(ports[2]!, 'GET', `/grid/rest/maps/after-join/k${i}`)).body.toString(), `v${i}`);
  } finally {
    await Promise.all(clients.map((c) => c.shutdown().catch(() => null)));
    await Promise.all(members.map((m) => m.stop('SIGKILL', 5000).catch(() => null)));
  }
});

/**
 * Four client writers, each on its own keys, while `lose` takes the third of three members away
 * after 1,000 acknowledged writes; 1,000 more are attempted once two members remain. An
 * acknowledged set is recorded; a failed one only attempted (its answer may have been lost after the
 * write), so its key is not judged. Every acknowledged write is then read back through REST.
 */
async function writersThroughLoss(t: { diagnostic(message: string): void }, mapName: string, lose: (member: MemberProcess) => Promise<void>): Promise<{ failures: string[]; judged: number }> {
  const ports = await freePorts(3);
  const members = await startClusterMembers(ports);
  let client: HzClient | null = null;
  try {
    await waitSettled(ports, 3, 30_000);
    client = await hz.Client.newHazelcastClient(clientConfig(ports));
    const map = await client.getMap(mapName);
    const acked = new Map<string, string>();
    const failures: string[] = [];
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
        } catch (e) {
          failures.push(String(e));
          acked.delete(key);
        }
      }
    };
    const writers = [0, 1, 2, 3].map((w) => writer(w));
    await until('1000 acknowledged writes', 30_000, async () => (acked.size >= 1000 ? true : null));
    await lose(members[2]!);
    await until('two members', 30_000, () => sizeIs(ports.slice(0, 2), 2));
    const afterLoss = sequence;
    await until('writes after the loss', 30_000, async () => (sequence > afterLoss + 1000 ? true : null));
    stop = true;
    await Promise.all(writers);
    await waitSettled(ports.slice(0, 2), 2, 60_000);
    t.diagnostic(`attempted ${sequence}, judged ${acked.size}, failed ${failures.length}`);
    for (const [key, value] of acked) {
      const answer = await request(ports[key.length % 2]!, 'GET', `/grid/rest/maps/${mapName}/${key}`);
      assert.equal(answer.body.toString(), value, `${key} acknowledged as ${value}`);
    }
    await client.shutdown();
    client = null;
    return { failures, judged: acked.size };
  } finally {
    if (client !== null) await client.shutdown().catch(() => null);
    await Promise.all(members.map((m) => m.stop('SIGKILL', 5000).catch(() => null)));
  }
}

test('kill -9 of a member under a client writer: every acknowledged write is read back', { timeout: 180_000 }, async (t) => {
  const { judged } = await writersThroughLoss(t, 'kw', async (member) => {
    member.child.kill('SIGKILL');
    await member.waitForExit();
  });
  assert.ok(judged >= 1000);
});

test('a member shut down gracefully under client writers: every call is answered, every write read back', { timeout: 180_000 }, async (t) => {
  // SIGTERM: the member hands its partitions off, answers calls that still reach it with 19 (the
  // client retries them elsewhere), finishes the ones in flight, and only then closes.
  const { failures } = await writersThroughLoss(t, 'gs', (member) => member.stop('SIGTERM', 60_000).then(() => undefined));
  assert.deepEqual(failures, [], 'no call failed');
});

test('a split-brain merge: the merging member closes its client connections, the client reconnects and takes the merged cluster\'s view', { timeout: 180_000 }, async () => {
  const [b, a1, a2] = await freePorts(3);
  const members: MemberProcess[] = [];
  let client: HzClient | null = null;
  try {
    // B comes up alone (A1, in its member list, is not there yet): a cluster of one.
    members.push(await startClusterMember(b!, [b!, a1!]));
    await waitSettled([b!], 1, 60_000);
    const config = clientConfig([b!]) as { properties: Record<string, unknown> };
    client = await hz.Client.newHazelcastClient({ ...config, properties: { ...config.properties, 'hazelcast.client.invocation.timeout.millis': 15_000 } });
    const map = await client.getMap('sb');
    await map.set('from-b', 'written before the merge');
    // A1 and A2 form a cluster of two; B's split-brain probe finds it and B, the smaller side, merges.
    members.push(await startClusterMember(a1!, [a1!, a2!]), await startClusterMember(a2!, [a1!, a2!]));
    await waitSettled([a1!, b!, a2!], 3, 90_000);
    const view = await clusterOf(a1!);
    await until('the client lists the merged cluster', 60_000, async () =>
      client!.getCluster().getMembers().map((m) => m.uuid.toString()).sort().join() === view.members.map((m) => m.uuid).sort().join() ? true : null,
    );
    assert.match(members[0]!.stdout(), /closed the client connection from [^:]+:\d+: this member is now in cluster \S+ \(the client authenticated with \S+\): reconnect/);
    // Calls work on the merged cluster, and B's entry was merged into it.
    assert.equal(await map.get('from-b'), 'written before the merge');
    await map.set('after', 'merge');
    assert.equal((await request(a2!, 'GET', '/grid/rest/maps/sb/after')).body.toString(), 'merge');
  } finally {
    if (client !== null) await client.shutdown().catch(() => null);
    await Promise.all(members.map((m) => m.stop('SIGKILL', 5000).catch(() => null)));
  }
});

test('client writes go where REST writes go: to a WAN target (an entry\'s own TTL with them) and into the persistence log', { timeout: 180_000 }, async () => {
  const [a, b, p] = await freePorts(3);
  const members: MemberProcess[] = [];
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'grid-client-persist-'));
  let client: HzClient | null = null;
  try {
    // WAN: cluster a replicates map `orders` to cluster b.
    members.push(...(await startWanCluster({ clusterName: 'b', peers: [b!], maps: { orders: null } })));
    members.push(...(await startWanCluster({ clusterName: 'a', peers: [a!], maps: { orders: 'to-b' }, replications: { 'to-b': [{ clusterName: 'b', endpoints: [b!], batchMaxDelayMillis: 100 }] } })));
    await waitSettled([a!], 1, 30_000);
    await waitSettled([b!], 1, 30_000);
    client = await hz.Client.newHazelcastClient(clientConfig([a!], 'a'));
    const orders = await client.getMap('orders');
    await orders.set('plain', 'kept');
    await orders.put('json', new hz.HazelcastJsonValue('{"n":1}'));
    await orders.set('short', 'expires', 3000);
    await until('the client writes on b', 20_000, async () => ((await getEntry(b!, 'orders', 'short')).status === 200 && (await getEntry(b!, 'orders', 'json')).status === 200 ? true : null));
    const plain = await getEntry(b!, 'orders', 'plain');
    assert.deepEqual([plain.value, plain.contentType], ['kept', 'text/plain; charset=utf-8']);
    assert.equal((await getEntry(b!, 'orders', 'json')).contentType, 'application/json');
    // The entry's own TTL travelled with the event: b drops it too, without a write from a.
    await until('the TTL entry gone on b', 20_000, async () => ((await getEntry(b!, 'orders', 'short')).status === 204 ? true : null));
    assert.equal((await getEntry(b!, 'orders', 'plain')).status, 200);
    await client.shutdown();
    client = null;

    // Persistence: a member with a persistent map and queue, restarted on its directory.
    const xml = memberXml(p!, [p!]).replace(
      '</grid>',
      `<persistence enabled="true"><base-dir>${base}</base-dir></persistence>
      <map name="kept"><data-persistence enabled="true" fsync="false"/></map>
      <queue name="jobs"><data-persistence enabled="true" fsync="false"/></queue></grid>`,
    );
    let persistent = await startMember({ xml, args: ['--port', String(p)] });
    members.push(persistent);
    await waitSettled([p!], 1, 30_000);
    client = await hz.Client.newHazelcastClient(clientConfig([p!]));
    const kept = await client.getMap('kept');
    await kept.set('k', 'v');
    await kept.set('long-ttl', 'still here', 3_600_000);
    await kept.set('short-ttl', 'gone', 1000);
    await (await client.getQueue('jobs')).offer('job-1');
    await client.shutdown();
    client = null;
    // The short TTL passes while the member runs; an entry expired before it went down stays gone.
    await new Promise((r) => setTimeout(r, 1500));
    await persistent.stop('SIGTERM', 30_000);
    persistent = await startMember({ xml, args: ['--port', String(p)] });
    members.push(persistent);
    await waitSettled([p!], 1, 60_000);
    assert.equal((await request(p!, 'GET', '/grid/rest/maps/kept/k')).body.toString(), 'v');
    assert.equal((await request(p!, 'GET', '/grid/rest/maps/kept/long-ttl')).body.toString(), 'still here');
    assert.equal((await request(p!, 'GET', '/grid/rest/maps/kept/short-ttl')).status, 204, 'expired before the member went down');
    assert.equal((await request(p!, 'GET', '/grid/rest/queues/jobs/0')).body.toString(), 'job-1');
  } finally {
    if (client !== null) await client.shutdown().catch(() => null);
    await Promise.all(members.map((m) => m.stop('SIGKILL', 5000).catch(() => null)));
    fs.rmSync(base, { recursive: true, force: true });
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
