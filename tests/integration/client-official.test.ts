// The official Node.js client (`hazelcast-client`, a dev dependency: README "Tests") against real
// members: it connects to a 3-member cluster with smart routing, authenticates on every member,
// learns the three members and a partition table of 271 partitions owned by them, and shuts down
// cleanly. A wrong cluster name makes it give up. Map and queue calls are not served yet
// (docs/client.md): a put is answered with UNSUPPORTED_OPERATION, which the client reports as such.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { clusterOf, freePorts, startClusterMembers, until, sizeIs } from '../harness/cluster.js';
import { request } from '../harness/raw-http.js';

interface HzMember {
  readonly uuid: { toString(): string };
  readonly address: { readonly port: number };
}
interface HzClient {
  getCluster(): { getMembers(): HzMember[] };
  getPartitionService(): { getPartitionCount(): number; getPartitionOwner(partitionId: number): { toString(): string } | undefined };
  getMap(name: string): Promise<{ put(key: string, value: string): Promise<unknown> }>;
  shutdown(): Promise<void>;
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
    await until('three members', 30_000, () => sizeIs(ports, 3));
    await until('cluster-safe', 30_000, async () => ((await request(ports[0]!, 'GET', '/grid/health/cluster-safe')).status === 200 ? true : null));
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
    // Not served yet: the client is told so (and does not retry).
    const map = await client.getMap('m');
    await assert.rejects(map.put('k', 'v'), /0x010100 is not supported/);
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
