// Checks the built admin CLI (dist/admin.js) against real members: a two-member cluster with
// security off (state, change-state on one member read back through the other, nodes, cluster,
// health and its checks, log-level set/get/reset, member-list, version, a wrong cluster name → exit
// 1, --json, and last shutdown --cluster: the member called stops, and so does the other one),
// a dead address → exit 3, a member with security on (realm
// user: wrong password → 1, right one → 0, from --password-file and from GRID_ADMIN_* too, Basic
// credentials for GET log-level, the password never printed, shutdown --member stopping it), an
// HTTPS member (the test CA → 0, no CA → 3, --insecure → 0 with a warning, plain HTTP → 3), and
// local fake servers: no answer within --timeout → 3, an answer over the size cap → 3, a 200 that
// is not the member's JSON → 1. How: every CLI run is a child process whose stdout, stderr and exit
// status are checked; member state is read back with raw HTTP, not only through the CLI.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT, startMember, type MemberProcess, secureMemberXml } from '../harness/member-process.js';
import { freePorts, killAll, startClusterMember, waitSettled } from '../harness/cluster.js';
import { request } from '../harness/raw-http.js';

const ADMIN_JS = path.join(REPO_ROOT, 'dist', 'admin.js');

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The environment without GRID_ variables of the caller's shell. */
function cleanEnv(extra: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GRID_') && v !== undefined) out[k] = v;
  return { ...out, ...extra };
}

function admin(args: readonly string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [ADMIN_JS, ...args], { env: cleanEnv(env), timeout: 20_000 }, (error, stdout, stderr) => {
      if (error !== null && typeof error.code !== 'number') {
        reject(new Error(`grid-admin ${args.join(' ')} did not finish: ${error.message}; stderr: ${stderr}`));
        return;
      }
      resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr });
    });
  });
}

/** Runs the CLI and checks its exit status, naming the run and its output on failure. */
async function expect(code: number, args: readonly string[], env: Record<string, string> = {}): Promise<Run> {
  const r = await admin(args, env);
  assert.equal(r.code, code, `grid-admin ${args.join(' ')} exited ${r.code}, expected ${code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}

before(() => {
  assert.ok(fs.existsSync(ADMIN_JS), `${ADMIN_JS} is missing: run npm run build first`);
});

describe('a cluster of two with security off', () => {
  let members: MemberProcess[] = [];
  let ports: number[] = [];
  let a: string[];
  let b: string[];

  before(async () => {
    ports = await freePorts(2);
    members = await Promise.all(ports.map((p) => startClusterMember(p, ports)));
    await waitSettled(ports, 2, 30_000);
    a = ['--address', `127.0.0.1:${ports[0]}`];
    b = ['--address', `127.0.0.1:${ports[1]}`];
  });
  after(async () => {
    await killAll(members);
  });

  test('state, change-state on one member read back through the other, and back to active', async () => {
    assert.equal((await expect(0, [...a, 'state'])).stdout, 'cluster state: active\n');
    assert.equal((await expect(0, [...a, 'change-state', 'FROZEN'])).stdout, 'cluster state changed to frozen\n');
    assert.equal((await expect(0, [...b, 'state'])).stdout, 'cluster state: frozen\n');
    const health = await request(ports[1] as number, 'GET', '/grid/health/cluster-state');
    assert.equal(health.text(), '"FROZEN"', 'the member itself says so');
    // The same state again: the member answers {"status":"fail"}, so exit 1.
    const again = await expect(1, [...b, 'change-state', 'frozen']);
    assert.match(again.stderr, /change-state refused by 127\.0\.0\.1:\d+: the cluster is already frozen/);
    assert.equal((await expect(0, [...b, '--json', 'change-state', 'active'])).stdout, '{"status":"success","state":"active"}\n');
    assert.equal((await expect(0, [...a, 'health', 'cluster-state'])).stdout, 'ACTIVE\n');
  });

  test('nodes and cluster list both members; version is the cluster version', async () => {
    const nodes = (await expect(0, [...a, 'nodes'])).stdout;
    assert.equal(nodes.match(/Member \[/g)?.length, 2, nodes);
    assert.match(nodes, /\nGrid 0\.1\.0\nNode\.js /);
    const cluster = (await expect(0, [...b, 'cluster'])).stdout;
    assert.match(cluster, /^members: 2\n/);
    assert.match(cluster, new RegExp(`\\[127\\.0\\.0\\.1\\]:${ports[1]}  [0-9a-f-]{36}  0\\.1\\.0  \\(this\\)`));
    const json = JSON.parse((await expect(0, [...b, 'cluster', '--json'])).stdout) as { members: unknown[] };
    assert.equal(json.members.length, 2);
    assert.equal((await expect(0, [...a, 'version'])).stdout, 'cluster version: 0.1\n');
  });

  test('health and each of its checks', async () => {
    const h = (await expect(0, [...a, 'health'])).stdout;
    assert.match(h, /^node state: +ACTIVE\ncluster state: +ACTIVE\ncluster safe: +true\nmigration queue size: +0\ncluster size: +2\n$/);
    assert.equal((await expect(0, [...a, 'health', 'ready'])).stdout, 'ready\n');
    assert.equal((await expect(0, [...a, 'health', 'node-state'])).stdout, 'ACTIVE\n');
    assert.equal((await expect(0, [...a, 'health', 'cluster-size'])).stdout, '2\n');
    assert.equal((await expect(0, [...a, 'health', 'cluster-safe'])).stdout, 'cluster safe\n');
    assert.equal((await expect(0, [...a, 'health', 'migration-queue-size'])).stdout, '0\n');
    assert.deepEqual(JSON.parse((await expect(0, [...a, 'health', '--json'])).stdout), {
      nodeState: 'ACTIVE', clusterState: 'ACTIVE', clusterSafe: true, migrationQueueSize: 0, clusterSize: 2,
    });
  });

  test('log-level: unset, set (read back), reset', async () => {
    assert.equal((await expect(0, [...a, 'log-level'])).stdout, 'log level: not set (the configured level applies)\n');
    assert.equal((await expect(0, [...a, 'log-level', 'finer'])).stdout, 'log level set to FINER\n');
    assert.equal((await expect(0, [...a, 'log-level'])).stdout, 'log level: FINER\n');
    assert.equal((await request(ports[0] as number, 'GET', '/grid/rest/log-level')).text(), '{"logLevel":"FINER"}');
    assert.equal((await expect(0, [...a, 'log-level', '--reset'])).stdout, 'log level reset to the configured level\n');
    assert.equal((await request(ports[0] as number, 'GET', '/grid/rest/log-level')).text(), '{"logLevel":null}');
    await expect(2, [...a, 'log-level', 'LOUD']);
  });

  test('member-list: read, replaced, read back', async () => {
    const list = ports.map((p) => `127.0.0.1:${p}`);
    assert.equal((await expect(0, [...a, 'member-list'])).stdout, list.join('\n') + '\n');
    const extra = [...list, '127.0.0.1:1-3'];
    assert.equal((await expect(0, [...a, 'member-list', extra.join(',')])).stdout, extra.join('\n') + '\n');
    assert.equal((await request(ports[0] as number, 'GET', '/grid/rest/config/tcp-ip/member-list')).text(), JSON.stringify({ status: 'success', 'member-list': extra }));
    const bad = await expect(1, [...a, 'member-list', '127.0.0.1:99999']);
    assert.match(bad.stderr, /refused by .*member list entry .*\(HTTP 400 Bad Request\)/);
    assert.equal((await expect(0, [...a, 'member-list', ...list])).stdout, list.join('\n') + '\n');
  });

  test('a wrong cluster name is refused with exit 1; the right one from the environment works', async () => {
    const r = await expect(1, [...a, 'state', '--cluster-name', 'prod']);
    assert.match(r.stderr, /state refused by 127\.0\.0\.1:\d+: unauthenticated \(HTTP 403 Forbidden\)\nhint: the member refused cluster name 'prod'/);
    assert.equal(r.stdout, '');
    const j = await expect(1, [...a, 'state', '--json'], { GRID_ADMIN_CLUSTER_NAME: 'prod' });
    assert.equal(j.stdout, '{"status":"fail","message":"unauthenticated"}\n');
    await expect(0, [...a, 'state'], { GRID_ADMIN_CLUSTER_NAME: 'dev' });
  });

  test('shutdown --cluster: the cluster turns passive and the member called exits 0', async () => {
    await expect(2, [...a, 'shutdown']);
    assert.match((await expect(0, [...a, 'shutdown', '--cluster'])).stdout, /cluster shutdown started/);
    assert.equal(await (members[0] as MemberProcess).waitForExit(15_000), 0);
    const dead = await expect(3, [...a, 'state']);
    assert.match(dead.stderr, /cannot reach the member: connect ECONNREFUSED/);
    await (members[1] as MemberProcess).waitForOutput(/cluster state changed from ACTIVE to PASSIVE/, 5000);
  });

  test('shutdown --cluster: the other member exits 0 too', async () => {
    assert.equal(await (members[1] as MemberProcess).waitForExit(15_000), 0);
  });
});

test('a dead address exits 3 (text and --json)', async () => {
  const [port] = await freePorts(1);
  const r = await expect(3, ['--address', `127.0.0.1:${port}`, 'health', '--timeout', '5']);
  assert.match(r.stderr, /^grid-admin: health: 127\.0\.0\.1:\d+: cannot reach the member: connect ECONNREFUSED .*\nhint: nothing listens there/);
  const j = await expect(3, ['--address', `127.0.0.1:${port}`, 'state', '--json']);
  assert.equal((JSON.parse(j.stdout) as { code: string }).code, 'ECONNREFUSED');
});

test('a server that never answers is exit 3 after --timeout; an oversized answer is exit 3; a non-Grid answer is exit 1', async () => {
  const silent = net.createServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const big = http.createServer((_req, res) => {
    if (_req.url === '/grid/health') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>not a member</html>');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    let left = 17;
    const write = (): void => {
      while (left > 0) {
        left--;
        if (!res.write(chunk)) {
          res.once('drain', write);
          return;
        }
      }
      res.end();
    };
    write();
  });
  await new Promise<void>((resolve) => big.listen(0, '127.0.0.1', resolve));
  try {
    const started = Date.now();
    const r = await expect(3, ['--address', `127.0.0.1:${(silent.address() as net.AddressInfo).port}`, 'state', '--timeout', '1']);
    assert.match(r.stderr, /no answer: no complete answer within 1 s\nhint: the member did not answer in time/);
    assert.ok(Date.now() - started < 10_000);
    const bigPort = (big.address() as net.AddressInfo).port;
    const o = await expect(3, ['--address', `127.0.0.1:${bigPort}`, 'cluster']);
    assert.match(o.stderr, /answer larger than 16777216 bytes/);
    const h = await expect(1, ['--address', `127.0.0.1:${bigPort}`, 'health']);
    assert.match(h.stderr, /answered HTTP 200 OK with an unexpected answer \(expected a JSON object\): "<html>not a member<\/html>"/);
  } finally {
    silent.close();
    big.closeAllConnections();
    big.close();
  }
});

const PASSWORD = 'pw-Admin-7x!';
const XML_SECURE = secureMemberXml(PASSWORD);

describe('a member with security on', () => {
  let member: MemberProcess;
  let a: string[];
  let dir: string;

  before(async () => {
    member = await startMember({ args: ['--rest-groups', 'CLUSTER_WRITE'], xml: XML_SECURE });
    a = ['--address', `127.0.0.1:${member.port}`];
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'grid-admin-'));
  });
  after(async () => {
    await member.stop('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a wrong password or the cluster name is refused (exit 1); the right password succeeds (exit 0); it is never printed', async () => {
    const wrong = await expect(1, [...a, 'state', '--user', 'admin', '--password', 'nope']);
    assert.match(wrong.stderr, /unauthenticated \(HTTP 403 Forbidden\)\nhint: the member refused user 'admin'/);
    await expect(1, [...a, 'state']);
    const right = await expect(0, [...a, 'state', '--user', 'admin', '--password', PASSWORD]);
    assert.equal(right.stdout, 'cluster state: active\n');
    const file = path.join(dir, 'pw');
    fs.writeFileSync(file, `${PASSWORD}\n`);
    await expect(0, [...a, 'nodes', '--user', 'admin', '--password-file', file]);
    await expect(0, [...a, 'state'], { GRID_ADMIN_USER: 'admin', GRID_ADMIN_PASSWORD: PASSWORD });
    await expect(1, [...a, 'state'], { GRID_ADMIN_USER: 'admin', GRID_ADMIN_PASSWORD: 'old' });
    await expect(2, [...a, 'state', '--user', 'admin']);
    for (const r of [wrong, right]) assert.equal(`${r.stdout}${r.stderr}`.includes(PASSWORD), false);
    assert.equal(member.stdout().includes(PASSWORD), false, 'nor does the member log it');
  });

  test('GET log-level and health cluster-state carry the user in a Basic header; without one they are refused', async () => {
    const creds = ['--user', 'admin', '--password', PASSWORD];
    await expect(1, [...a, 'log-level']);
    assert.equal((await expect(0, [...a, 'log-level', ...creds])).stdout, 'log level: not set (the configured level applies)\n');
    await expect(0, [...a, 'log-level', 'FINE', ...creds]);
    assert.equal((await expect(0, [...a, 'log-level', ...creds])).stdout, 'log level: FINE\n');
    await expect(0, [...a, 'log-level', '--reset', ...creds]);
    await expect(1, [...a, 'health', 'cluster-state']);
    assert.equal((await expect(0, [...a, 'health', 'cluster-state', ...creds])).stdout, 'ACTIVE\n');
    await expect(0, [...a, 'health', 'ready']);
  });

  test('shutdown --member with a wrong password does nothing; with the right one the member exits 0', async () => {
    await expect(1, [...a, 'shutdown', '--member', '--user', 'admin', '--password', 'nope']);
    await expect(0, [...a, 'health', 'ready']);
    await expect(0, [...a, 'shutdown', '--member'], { GRID_ADMIN_USER: 'admin', GRID_ADMIN_PASSWORD: PASSWORD });
    assert.equal(await member.waitForExit(15_000), 0);
  });
});

describe('a member speaking HTTPS', () => {
  const tlsFile = (name: string): string => path.join(REPO_ROOT, 'tests', 'fixtures', 'tls', name);
  let member: MemberProcess;
  let a: string[];

  before(async () => {
    member = await startMember({
      xml: `<grid><network><rest-api enabled="true"/>
        <ssl enabled="true" key-file="${tlsFile('server.key')}" cert-file="${tlsFile('server.crt')}" ca-file="${tlsFile('ca.crt')}" client-auth="optional"/>
      </network></grid>`,
    });
    a = ['--address', `127.0.0.1:${member.port}`];
  });
  after(async () => {
    await member.stop('SIGKILL');
  });

  test('with the test CA (and a client certificate) it works; without the CA or without --https there is no answer (exit 3)', async () => {
    assert.equal((await expect(0, [...a, '--https', '--ca', tlsFile('ca.crt'), 'state'])).stdout, 'cluster state: active\n');
    await expect(0, [...a, '--https', '--ca', tlsFile('ca.crt'), '--cert', tlsFile('client.crt'), '--key', tlsFile('client.key'), 'health']);
    const untrusted = await expect(3, [...a, '--https', 'state']);
    assert.match(untrusted.stderr, /hint: the member's certificate is not signed by a known authority: --ca FILE/);
    const plain = await expect(3, [...a, 'state', '--timeout', '5']);
    assert.match(plain.stderr, /cannot reach the member|no answer/);
    const insecure = await expect(0, [...a, '--https', '--insecure', 'version']);
    assert.match(insecure.stderr, /WARNING: --insecure: the member's certificate is NOT verified/);
    assert.equal(insecure.stdout, 'cluster version: 0.1\n');
    await expect(2, [...a, '--https', '--ca', tlsFile('missing.crt'), 'state']);
  });
});
