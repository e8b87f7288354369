// The client protocol's connection handling against real member processes (spec/client.md
// "Connection"): CP2 on the unified port, authentication (cluster id the same on every member,
// member UUID as REST lists it, 271 partitions), a wrong cluster name refused with the connection
// kept, ping, error 61 for a type the member does not serve (connection kept), the cluster view
// (member list and a complete partition table), and bad input: garbage after CP2, a frame over the
// limit, a call before authentication, the protocol switched off. The member keeps serving REST.
import test from 'node:test';
import assert from 'node:assert/strict';
import type { ClientMessage } from '../../src/client/frames.js';
import { PREAMBLE } from '../../src/client/frames.js';
import { request } from '../harness/raw-http.js';
import { clusterOf, freePorts, memberXml, metricsOf, startClusterMembers, startClusterMember, until, sizeIs, waitSettled } from '../harness/cluster.js';
import { authRequest, bareRequest, encodeFrames, RawClient, requestInitial, uuidAt, wireFrame } from '../harness/client-wire.js';
import { stringData } from '../../src/client/data.js';
import { startMember, type MemberProcess } from '../harness/member-process.js';

const AUTH_RESPONSE = 0x000101;

interface AuthAnswer {
  status: number;
  memberUuid: string | null;
  partitionCount: number;
  clusterId: string | null;
  port: number | null;
}

function readAuth(m: ClientMessage): AuthAnswer {
  const initial = m.frames[0]!.content;
  const address = m.frames[1]!;
  const isNull = (address.flags & 0x0400) !== 0;
  return {
    status: initial[13]!,
    memberUuid: uuidAt(initial, 14),
    partitionCount: initial.readInt32LE(32),
    clusterId: uuidAt(initial, 36),
    port: isNull ? null : m.frames[2]!.content.readInt32LE(0),
  };
}

async function connectAndAuth(port: number, clusterName = 'dev'): Promise<{ client: RawClient; auth: AuthAnswer }> {
  const client = await RawClient.connect(port);
  client.send(Buffer.concat([PREAMBLE, authRequest(clusterName, { correlationId: 1n })]));
  const auth = readAuth(await client.answer(AUTH_RESPONSE, 1n));
  return { client, auth };
}

test('clients authenticate on every member of a cluster, see its view, and get 61 for what is not served', { timeout: 120_000 }, async () => {
  const ports = await freePorts(3);
  const members = await startClusterMembers(ports);
  const clients: RawClient[] = [];
  try {
    await waitSettled(ports, 3, 30_000);
    const view = await clusterOf(ports[0]!);

    // Authentication on each member: status 0, that member's UUID, one cluster id for all.
    const clusterIds = new Set<string>();
    for (const [i, port] of ports.entries()) {
      const { client, auth } = await connectAndAuth(port);
      clients.push(client);
      assert.equal(auth.status, 0, `member ${i}`);
      const self = (await clusterOf(port)).members.find((m) => m.localMember);
      assert.equal(auth.memberUuid, self?.uuid);
      assert.equal(auth.partitionCount, 271);
      assert.equal(auth.port, port);
      assert.ok(auth.clusterId !== null && auth.clusterId !== self?.uuid);
      clusterIds.add(auth.clusterId);
    }
    assert.equal(clusterIds.size, 1, 'the cluster id is the same on every member');

    const client = clients[0]!;
    // Ping.
    client.send(bareRequest(0x000b00, 2n));
    assert.equal((await client.answer(0x000b01, 2n)).frames.length, 1);
    // An unsupported type: error 61 naming it, the connection kept (a ping still answers).
    client.send(bareRequest(0x123400, 3n));
    const error = await client.answer(0, 3n);
    assert.equal(error.frames[3]!.content.readInt32LE(0), 61);
    assert.match(error.frames[5]!.content.toString(), /0x123400/);
    client.send(bareRequest(0x000b00, 4n));
    await client.answer(0x000b01, 4n);
    // The metrics count connections, calls by service and error answers.
    const metrics = (await request(ports[0]!, 'GET', '/grid/rest/metrics')).json() as Record<string, number>;
    assert.ok((metrics.clientConnections ?? 0) >= 1, JSON.stringify(metrics));
    assert.ok((metrics.clientAuthentications ?? 0) >= 1);
    assert.ok((metrics.clientCalls ?? 0) >= 3 && (metrics.clientCallsClient ?? 0) >= 2);
    assert.equal(metrics.clientErrors, 1);

    // The cluster view: the answer, then the member list and the partition table as events.
    client.send(bareRequest(0x000300, 5n));
    await client.answer(0x000301, 5n);
    const membersEvent = await client.answer(0x000302, 5n);
    assert.ok((membersEvent.frames[0]!.flags & 0x0200) !== 0, 'an event');
    assert.ok(membersEvent.frames[0]!.content.readInt32LE(16) > 0, 'members version');
    const memberUuids = membersEvent.frames.filter((f) => f.content.length === 18).map((f) => uuidAt(f.content, 0));
    assert.deepEqual(memberUuids, view.members.map((m) => m.uuid));
    const partitions = await client.answer(0x000303, 5n);
    const frames = partitions.frames;
    const owners = frames[frames.length - 1]!.content;
    const ownerUuids = Array.from({ length: owners.length / 17 }, (_, i) => uuidAt(owners, 17 * i));
    const ids: number[] = [];
    for (const f of frames.slice(2, 2 + ownerUuids.length)) for (let at = 0; at < f.content.length; at += 4) ids.push(f.content.readInt32LE(at));
    assert.deepEqual([...ids].sort((a, b) => a - b), Array.from({ length: 271 }, (_, i) => i), 'every partition exactly once');
    for (const u of ownerUuids) assert.ok(view.members.some((m) => m.uuid === u), `owner ${u} is a member`);

    // A member leaving: the registered connection gets a new member list with a higher version.
    const before = membersEvent.frames[0]!.content.readInt32LE(16);
    await members[2]!.stop('SIGTERM', 60_000);
    await client.until('a member list of two', 30_000, () =>
      client.messages.some((m) => m.frames[0]!.content.readInt32LE(0) === 0x000302 && m.frames[0]!.content.readInt32LE(16) > before && m.frames.filter((f) => f.content.length === 18).length === 2),
    );
  } finally {
    for (const c of clients) c.close();
    await Promise.all(members.map((m) => m.stop('SIGKILL', 5000).catch(() => null)));
  }
});

// A leaving member leaves the member list only once its clients have moved away: removed while a
// client still routes calls to it, the Node client closes its connection on the member-left event
// with calls on it, which fail, and a call it was waiting to retry is still sent later, after the
// caller's next writes (an acknowledged write then read back older). Meanwhile its calls are served.
test('a leaving member keeps serving a client that still calls it, stays listed meanwhile, and leaves once the calls stop', { timeout: 120_000 }, async () => {
  const ports = await freePorts(2);
  const members = await startClusterMembers(ports);
  try {
    await waitSettled(ports, 2, 30_000);
    const { client } = await connectAndAuth(ports[1]!);
    let calling = true;
    let correlation = 10n;
    const answerTypes: number[] = [];
    const loop = (async (): Promise<void> => {
      while (calling && !client.closed) {
        const id = correlation++;
        client.send(encodeFrames([requestInitial(0x010200, id, -1, Buffer.alloc(8)), wireFrame('m'), wireFrame(stringData(`k${id}`))]));
        await client.until(`an answer to call ${id}`, 10_000, () => client.messages.some((m) => m.frames[0]!.content.readBigInt64LE(4) === id));
        answerTypes.push(client.messages.find((m) => m.frames[0]!.content.readBigInt64LE(4) === id)!.frames[0]!.content.readInt32LE(0));
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    members[1]!.child.kill('SIGTERM');
    await members[1]!.waitForOutput(/every replica handed off/, 60_000);
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(await sizeIs([ports[0]!], 2), true, 'still listed while its client calls it');
    calling = false;
    await loop;
    assert.ok(answerTypes.length > 20 && answerTypes.every((t) => t === 0x010201), `every call answered with a value: ${[...new Set(answerTypes)].join(',')}`);
    await until('a member list of one', 10_000, () => sizeIs([ports[0]!], 1));
    assert.match(members[1]!.stdout(), /the clients moved to the new partition owners after \d+ ms/);
    assert.equal(await members[1]!.waitForExit(30_000), 0);
    client.close();
  } finally {
    await Promise.all(members.map((m) => m.stop('SIGKILL', 5000).catch(() => null)));
  }
});

test('a member shutting down answers calls with 19 (the clients retry those elsewhere), waits out a client\'s retry pause, and closes once none is owed', { timeout: 120_000 }, async () => {
  const ports = await freePorts(2);
  const members = await startClusterMembers(ports);
  try {
    await waitSettled(ports, 2, 30_000);
    const { client, auth } = await connectAndAuth(ports[1]!);
    assert.equal(auth.status, 0);
    const get = (correlationId: bigint): Buffer => {
      const threadId = Buffer.alloc(8);
      return encodeFrames([requestInitial(0x010200, correlationId, -1, threadId), wireFrame('m'), wireFrame(stringData('k'))]);
    };
    client.send(get(2n));
    assert.equal((await client.answer(0x010201, 2n)).frames.length, 2, 'served before the shutdown');
    members[1]!.child.kill('SIGTERM');
    // Calls go on while the member hands its partitions off; once it stops serving, each is
    // answered with 19 and a message, until the client stops calling.
    let correlation = 3n;
    let notActive: ClientMessage | null = null;
    while (notActive === null && !client.closed) {
      const id = correlation++;
      client.send(get(id));
      const answerTo = (): ClientMessage | undefined => client.messages.find((m) => m.frames[0]!.content.readBigInt64LE(4) === id);
      await client.until(`an answer to call ${id}`, 10_000, () => answerTo() !== undefined || client.closed);
      const answer = answerTo();
      if (answer !== undefined && answer.frames[0]!.content.readInt32LE(0) === 0) notActive = answer;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(notActive !== null, 'a call answered with an error before the connection closed');
    assert.equal(notActive.frames[3]!.content.readInt32LE(0), 19);
    assert.match(notActive.frames[5]!.content.toString(), /shutting down/);
    // An official client that got 19 five times waits a second (its retry pause) before it sends the
    // call again: the connection is still open then, and the call is answered, not cut off.
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(client.closed, false, 'open a second after the last 19');
    const again = correlation++;
    client.send(get(again));
    await client.until(`an answer to call ${again}`, 10_000, () => client.messages.some((m) => m.frames[0]!.content.readBigInt64LE(4) === again));
    // No call owed and none coming: the member closes the connection and exits.
    await client.until('the connection closed', 10_000, () => client.closed);
    assert.equal(await members[1]!.waitForExit(30_000), 0);
  } finally {
    await Promise.all(members.map((m) => m.stop('SIGKILL', 5000).catch(() => null)));
  }
});

test('a client that does not read its answers is not read either: the member holds a bounded pile of answers', { timeout: 90_000 }, async () => {
  const [port] = await freePorts(1);
  const [member] = await startClusterMembers([port!]);
  try {
    await until('joined', 20_000, () => sizeIs([port!], 1));
    const mib = Buffer.alloc(1024 * 1024, 0x61);
    assert.equal((await request(port!, 'POST', '/grid/rest/maps/big/k', { body: mib, headers: { 'content-type': 'application/octet-stream' } })).status, 200);
    const { client } = await connectAndAuth(port!);
    const callsBefore = (await metricsOf(port!)).clientCalls ?? 0;
    client.socket.pause();
    // 300 gets of a 1 MiB value in one write: 300 MiB of answers if the member took them all.
    const gets = Array.from({ length: 300 }, (_, i) => encodeFrames([requestInitial(0x010200, BigInt(100 + i), -1, Buffer.alloc(8)), wireFrame('big'), wireFrame(stringData('k'))]));
    client.send(Buffer.concat(gets));
    await new Promise((r) => setTimeout(r, 1500));
    const handled = ((await metricsOf(port!)).clientCalls ?? 0) - callsBefore;
    assert.ok(handled < 50, `the member took ${handled} of 300 calls while no answer was read`);
    assert.equal((await request(port!, 'GET', '/grid/health/ready')).status, 200, 'and serves everything else');
    client.socket.resume();
    await client.until('300 answers', 60_000, () => client.messages.filter((m) => m.frames[0]!.content.readInt32LE(0) === 0x010201).length === 300).catch((e: unknown) => {
      throw new Error(`${String(e)}\n${member!.stdout().slice(-3000)}`);
    });
    for (const m of client.messages.filter((x) => x.frames[0]!.content.readInt32LE(0) === 0x010201)) assert.equal(m.frames[1]!.content.length, 8 + 4 + mib.length);
    client.close();
  } finally {
    await member!.stop('SIGKILL', 5000).catch(() => null);
  }
});

test('refusals and bad input: wrong cluster name, garbage, an oversized frame, a call before authentication, the protocol off', { timeout: 90_000 }, async () => {
  const [port, offPort] = await freePorts(2);
  const member = await startClusterMember(port!, [port!], { properties: { 'grid.client.heartbeat.timeout.seconds': 2 } });
  let off: MemberProcess | null = null;
  try {
    await until('joined', 20_000, () => sizeIs([port!], 1));
    // Opened now, checked at the end: one that never authenticates (it trickles a frame a byte a
    // second, so it is not idle: closed at the 10 s authentication deadline), one that authenticates
    // and then stays silent (closed after the 2 s heartbeat timeout set above).
    const silentOpenedAt = Date.now();
    const silent = await RawClient.connect(port!);
    const trickleHeader = Buffer.alloc(4);
    trickleHeader.writeInt32LE(200, 0);
    silent.send(Buffer.concat([PREAMBLE, trickleHeader]));
    const trickle = setInterval(() => silent.send(Buffer.from([0])), 1000);
    trickle.unref();
    const { client: idle, auth: idleAuth } = await connectAndAuth(port!);
    assert.equal(idleAuth.status, 0);
    await idle.until('the idle client closed', 10_000, () => idle.closed);
    // A wrong cluster name: status 1, no address, and the connection stays open.
    const { client: wrong, auth } = await connectAndAuth(port!, 'not-dev');
    assert.equal(auth.status, 1);
    assert.equal(auth.port, null);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(wrong.closed, false, 'the client closes a refused connection itself');
    wrong.close();

    // Garbage after CP2: a frame length of 3.
    const garbage = await RawClient.connect(port!);
    garbage.send(Buffer.concat([PREAMBLE, Buffer.from([3, 0, 0, 0, 0, 0])]));
    await garbage.until('garbage closed', 5000, () => garbage.closed);
    // A frame announcing 1 GiB: closed from its length alone.
    const huge = await RawClient.connect(port!);
    const header = Buffer.alloc(6);
    header.writeInt32LE(1 << 30, 0);
    huge.send(Buffer.concat([PREAMBLE, header]));
    await huge.until('oversized frame closed', 5000, () => huge.closed);
    // A ping before authentication.
    const early = await RawClient.connect(port!);
    early.send(Buffer.concat([PREAMBLE, bareRequest(0x000b00, 1n)]));
    await early.until('early call closed', 5000, () => early.closed);
    // The member still serves REST and new clients.
    assert.equal((await request(port!, 'GET', '/grid/health/ready')).status, 200);
    const { client: ok, auth: okAuth } = await connectAndAuth(port!);
    assert.equal(okAuth.status, 0);
    ok.close();
    await until('log lines for the closed connections', 5000, async () => (/frame of 1073741824 bytes/.test(member.stdout()) && /before authentication/.test(member.stdout()) ? true : null));
    assert.match(member.stdout(), /closed the client connection from 127\.0\.0\.1:\d+: a frame of 1073741824 bytes is larger than grid\.client\.frame\.bytes\.max/);

    // The protocol switched off: a CP2 connection is closed at once, and the log says why.
    off = await startMember({ xml: memberXml(offPort!, [offPort!]), args: ['--port', String(offPort)], env: { GRID_NETWORK_CLIENTPROTOCOL_ENABLED: 'false' } });
    const refused = await RawClient.connect(offPort!);
    refused.send(Buffer.concat([PREAMBLE, authRequest('dev')]));
    await refused.until('closed with the protocol off', 5000, () => refused.closed);
    assert.equal(refused.messages.length, 0);
    await until('the log line', 5000, async () => (/the client protocol is off/.test(off!.stdout()) ? true : null));

    await silent.until('the unauthenticated client closed', 20_000, () => silent.closed);
    clearInterval(trickle);
    assert.ok(Date.now() - silentOpenedAt >= 9_000, 'not before the 10 s authentication deadline');
    assert.match(member.stdout(), /not authenticated within 10 s/);
    assert.match(member.stdout(), /no traffic for 2 s/);
  } finally {
    await member.stop('SIGKILL', 5000).catch(() => null);
    if (off !== null) await off.stop('SIGKILL', 5000).catch(() => null);
  }
});
