// Real processes kept on one address each (issue 9): two members with grid.socket.bind.any=false, one
// on 127.0.0.11 chosen by `<interfaces>`, one on 127.0.0.12 by a local public-address with the
// property set from the environment, form one cluster. Each port answers on its own address and
// refuses connections on 127.0.0.1 (nothing listens there); each start-up line names the bound
// address; every member connection a member accepted came from the peer's own address (the log
// line of the accepting side, which reads socket.remoteAddress; and, where `ss` exists, the
// kernel's socket table), so the outgoing side really left from its chosen address instead of the
// kernel's default 127.0.0.1. Then configurations the member must refuse before listening: an
// `<interface>` that matches no local address and a malformed one both exit 2 naming file:line:column.
// Linux routes all of 127.0.0.0/8 to `lo`, so these addresses need no setup. Waits poll with
// deadlines; no sleeps.
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { freePorts, killAll, logTail, until } from '../harness/cluster.js';
import { connectRefused } from '../harness/connection.js';
import { runMember, startMember, writeTempConfig, type MemberProcess } from '../harness/member-process.js';
import { request } from '../harness/raw-http.js';

const A_HOST = '127.0.0.11';
const B_HOST = '127.0.0.12';

function xml(network: string, ports: readonly number[], bindAnyProperty: boolean): string {
  return `<grid>
  ${bindAnyProperty ? '<properties><property name="grid.socket.bind.any">false</property></properties>' : ''}
  <network>
    ${network}
    <join><tcp-ip enabled="true"><member-list><member>${A_HOST}:${ports[0]}</member><member>${B_HOST}:${ports[1]}</member></member-list></tcp-ip></join>
    <rest-api enabled="true"/>
  </network>
</grid>`;
}

async function members(host: string, port: number): Promise<string[]> {
  const r = await request(port, 'GET', '/grid/rest/cluster', { host });
  if (r.status !== 200) throw new Error(`GET /grid/rest/cluster on ${host}:${port} answered ${r.statusLine}`);
  return (r.json() as { members: { address: string }[] }).members.map((m) => m.address).sort();
}

/** `ss -Htn state established` rows touching one of `ports`, as [local, peer] address:port pairs; null when ss is missing. */
function establishedOn(ports: readonly number[]): [string, string][] | null {
  const filter = ports.map((p) => `sport = :${p} or dport = :${p}`).join(' or ');
  let out: string;
  try {
    out = execFileSync('ss', ['-Htn', 'state', 'established', `( ${filter} )`], { encoding: 'utf8' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  // With a state filter the columns are: Recv-Q Send-Q Local:Port Peer:Port [Process].
  return out
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const cols = l.trim().split(/\s+/);
      return [cols[2] as string, cols[3] as string];
    });
}

test('bind-any off: two members on 127.0.0.11 and 127.0.0.12 form a cluster, bound and dialling from their own addresses only', { timeout: 60_000 }, async (t) => {
  const ports = await freePorts(2);
  const [pa, pb] = ports as [number, number];
  const started: MemberProcess[] = [];
  try {
    const a = await startMember({
      xml: xml(`<interfaces enabled="true"><interface>10.255.255.*</interface><interface>${A_HOST}</interface></interfaces>`, ports, true),
      args: ['--port', String(pa)],
    });
    started.push(a);
    const b = await startMember({
      xml: xml(`<public-address>${B_HOST}</public-address>`, ports, false),
      args: ['--port', String(pb)],
      env: { GRID_PROPERTY_GRID_SOCKET_BIND_ANY: 'false' },
    });
    started.push(b);

    // The start-up lines name the chosen address, why, and what the listener bound.
    assert.match(a.stdout(), new RegExp(`address ${A_HOST}: interface ${A_HOST} is in the loopback network; listeners bind ${A_HOST} only and member connections leave from it`));
    assert.match(a.stdout(), new RegExp(`Grid member listening on \\[${A_HOST}\\]:${pa} \\(REST and member protocol on one port\\); bound to ${A_HOST} only`));
    assert.match(b.stdout(), new RegExp(`address ${B_HOST}: public-address ${B_HOST} is an address of this machine; listeners bind ${B_HOST} only`));
    assert.match(b.stdout(), new RegExp(`Grid member listening on \\[${B_HOST}\\]:${pb} \\(REST and member protocol on one port\\); bound to ${B_HOST} only`));

    const expected = [`[${A_HOST}]:${pa}`, `[${B_HOST}]:${pb}`];
    try {
      await until('one cluster of two on both members', 20_000, async () => {
        const [ma, mb] = await Promise.all([members(A_HOST, pa), members(B_HOST, pb)]);
        return ma.join() === expected.join() && mb.join() === expected.join() ? true : null;
      });
    } catch (e) {
      throw new Error(`${(e as Error).message}\n${logTail(a)}\n${logTail(b)}`);
    }

    // Each port answers on its own address only: 127.0.0.1 (and the other member's address) refuse.
    for (const [host, port] of [[A_HOST, pa], [B_HOST, pb]] as const) {
      assert.equal(await connectRefused(port, host), false, `${host}:${port} accepts`);
      assert.equal(await connectRefused(port, '127.0.0.1'), true, `127.0.0.1:${port} refuses`);
    }
    assert.equal(await connectRefused(pa, B_HOST), true);
    assert.equal(await connectRefused(pb, A_HOST), true);

    // Every member connection a member accepted came from the peer's own address, never 127.0.0.1.
    const acceptedOn = (m: MemberProcess, host: string, port: number): string[] =>
      [...m.stdout().matchAll(new RegExp(`member connection open between ${host.replace(/\./g, '\\.')}:${port} and ([0-9.]+):\\d+ \\(accepted;`, 'g'))].map((x) => x[1] as string);
    const fromB = acceptedOn(a, A_HOST, pa);
    const fromA = acceptedOn(b, B_HOST, pb);
    assert.ok(fromA.length + fromB.length >= 1, `some member connection was accepted\n${logTail(a)}\n${logTail(b)}`);
    assert.deepEqual(new Set(fromB), new Set(fromB.length === 0 ? [] : [B_HOST]), 'connections accepted by A came from 127.0.0.12');
    assert.deepEqual(new Set(fromA), new Set(fromA.length === 0 ? [] : [A_HOST]), 'connections accepted by B came from 127.0.0.11');

    // The kernel's view: the member connection runs between the two addresses (each socket of it
    // is listed once from each end), and nothing else is connected to the member ports.
    const rows = establishedOn(ports);
    if (rows === null) {
      t.diagnostic('ss is not installed: the socket-table check was skipped (the log check above ran)');
    } else {
      const between = (x: string, y: string): boolean => (x === `${A_HOST}:${pa}` && y.startsWith(`${B_HOST}:`)) || (x === `${B_HOST}:${pb}` && y.startsWith(`${A_HOST}:`));
      assert.ok(rows.some(([local, peer]) => between(local, peer) || between(peer, local)), `a member connection between the two addresses: ${JSON.stringify(rows)}`);
      for (const [local, peer] of rows) {
        for (const end of [local, peer]) assert.ok(end.startsWith(`${A_HOST}:`) || end.startsWith(`${B_HOST}:`), `every connection runs between the members' own addresses: ${local} ${peer}`);
      }
    }
  } finally {
    await killAll(started);
  }
});

test('an <interface> that matches no local address, or a malformed one, exits 2 naming file:line:column and listens on nothing', { timeout: 30_000 }, async () => {
  const [port] = await freePorts(1);
  const noMatch = writeTempConfig(`<grid>
  <properties><property name="grid.socket.bind.any">false</property></properties>
  <network>
    <port auto-increment="false">${port}</port>
    <interfaces enabled="true">
      <interface>198.51.100.*</interface>
    </interfaces>
  </network>
</grid>`);
  const r = await runMember(['--config', noMatch]);
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stdout, '', 'nothing is logged, nothing listens');
  assert.match(r.stderr, new RegExp(`^grid: config error: ${noMatch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:5:5: <interfaces enabled="true">: no local address matches 198\\.51\\.100\\.\\* \\(IPv4 addresses of this machine: [^)]*127\\.0\\.0\\.1[^)]*\\)\\n$`));
  assert.equal(await connectRefused(port as number), true);

  const malformed = writeTempConfig(`<grid>
  <network>
    <interfaces enabled="true"><interface>10.0.0.1</interface>
      <interface>10.0.0.0.1</interface></interfaces>
  </network>
</grid>`);
  const m = await runMember(['--config', malformed]);
  assert.equal(m.code, 2, m.stderr);
  assert.match(m.stderr, new RegExp(`^grid: config error: ${malformed.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:4:7: <interfaces> element <interface>: expected an IPv4 address pattern.*got "10\\.0\\.0\\.0\\.1"\\n$`));

  // The same refusal from the environment names the variable.
  const e = await runMember(['--port', String(port)], { GRID_NETWORK_INTERFACES_ENABLED: 'true', GRID_NETWORK_INTERFACES_INTERFACE: '198.51.100.7' });
  assert.equal(e.code, 2, e.stderr);
  assert.match(e.stderr, /^grid: config error: environment variable GRID_NETWORK_INTERFACES_INTERFACE: <interfaces enabled="true">: no local address matches 198\.51\.100\.7 /);
});
