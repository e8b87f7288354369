// Checks the life of a member process (shared/spec/config.md, docs/rest.md): --help and --version
// exit 0; invalid configuration (bad XML, unknown element with a hint, rule violations, DTDs, bad or
// unknown environment variables, bad or unknown flags) exits 2 with one stderr line naming the
// file:line:column, variable or flag, and listens on nothing; --print-config prints XML that loads
// again; the config file is found by --config, $GRID_CONFIG or ./grid.xml, with env and flags on
// top; without any config REST is off and the log says so; the sample config/grid.xml serves DATA;
// advanced networking splits REST and the member protocol onto two ports; SIGTERM and SIGINT answer
// waiting polls with 204, let an in-flight request finish and exit 0; a taken port is skipped by
// auto-increment.
// How: real processes (runMember for the ones that exit at once, startMember for servers); every
// wait is a condition polled with a deadline (log lines, metrics, socket closes, process exit).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT, runMember, startMember, writeTempConfig } from '../harness/member-process.js';
import { request, send } from '../harness/raw-http.js';
import { Connection, connectRefused, exchangeRaw, metrics, waitFor } from '../harness/connection.js';
import { encodeFrame, PREAMBLE, PROTOCOL_VERSION, PROTOCOL_VERSION_MIN } from '../../src/cluster/protocol/frame.js';
import { encodeHandshakeRequest, decodeHandshakeResponse } from '../../src/cluster/protocol/handshake.js';
import { HANDSHAKE_REQUEST } from '../../src/cluster/protocol/message-types.js';
import { firstFrame } from '../harness/handshake-fixture.js';
import { freePorts } from '../harness/cluster.js';

const PACKAGE_VERSION = (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

function emptyDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'grid-cwd-'));
}

/** Asserts a configuration error: exit 2, nothing on stdout (so nothing listened), one stderr line matching. */
function writeTempFile(bytes: Buffer): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'grid-test-')), 'grid.xml');
  fs.writeFileSync(file, bytes);
  return file;
}

function assertConfigError(result: { code: number | null; stdout: string; stderr: string }, pattern: RegExp): void {
  assert.equal(result.code, 2, `exit status; stderr: ${result.stderr}`);
  assert.equal(result.stdout, '', 'nothing was logged, so nothing listened');
  const lines = result.stderr.split('\n').filter((l) => l !== '');
  assert.equal(lines.length, 1, `one stderr line: ${result.stderr}`);
  assert.match(lines[0]!, pattern);
}

describe('command line', () => {
  test('--help documents every flag and exits 0', async () => {
    const r = await runMember(['--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /Usage:/);
    for (const flag of ['--config', '--port', '--cluster-name', '--instance-name', '--member', '--rest', '--rest-groups', '--public-address', '--lite', '--log-level', '--log-format', '--print-config', '--version', '--help']) {
      assert.match(r.stdout, new RegExp(`^\\s+${flag}\\b`, 'm'), `${flag} is documented`);
    }
    assert.equal(r.stderr, '');
  });

  test('--version prints the package version and exits 0', async () => {
    const r = await runMember(['--version']);
    assert.equal(r.code, 0);
    assert.equal(r.stdout.trim(), PACKAGE_VERSION);
  });

  test('--print-config prints the effective configuration as XML, which loads again to the same result', async () => {
    const r = await runMember(['--print-config', '--cluster-name', 'printed', '--port', '5999', '--rest-groups', 'DATA,HOT_RESTART'], {}, emptyDir());
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^<\?xml version="1\.0" encoding="UTF-8"\?>\n/);
    assert.match(r.stdout, /<grid>[\s\S]*<\/grid>\s*$/);
    assert.match(r.stdout, /<cluster-name>printed<\/cluster-name>/);
    assert.match(r.stdout, />5999<\/port>/);
    assert.match(r.stdout, /<rest-api enabled="true">/);
    assert.match(r.stdout, /<endpoint-group name="DATA" enabled="true"\/>/);
    assert.match(r.stdout, /<endpoint-group name="PERSISTENCE" enabled="true"\/>/, 'HOT_RESTART is PERSISTENCE');
    const file = writeTempConfig(r.stdout);
    const again = await runMember(['--config', file, '--print-config'], {}, emptyDir());
    assert.equal(again.code, 0, again.stderr);
    const body = (s: string): string => s.replace(/<!--[^\n]*-->\n/g, '');
    assert.equal(body(again.stdout), body(r.stdout));
  });

  test('precedence: file < GRID_* variables < flags', async () => {
    const file = path.join(REPO_ROOT, 'config', 'grid.xml');
    const fromFile = await runMember(['--config', file, '--print-config']);
    assert.match(fromFile.stdout, /<cluster-name>dev<\/cluster-name>/);
    const fromEnv = await runMember(['--config', file, '--print-config'], { GRID_CLUSTERNAME: 'from-env' });
    assert.match(fromEnv.stdout, /<cluster-name>from-env<\/cluster-name>/);
    const fromFlag = await runMember(['--config', file, '--print-config', '--cluster-name', 'from-flag'], { GRID_CLUSTERNAME: 'from-env' });
    assert.match(fromFlag.stdout, /<cluster-name>from-flag<\/cluster-name>/);
  });
});

describe('invalid configuration exits 2 with one line and listens on nothing', () => {
  test('malformed XML names file:line:column', async () => {
    const file = writeTempConfig('<grid>\n  <cluster-name>dev\n</grid>\n');
    assertConfigError(await runMember(['--config', file]), new RegExp(`${file.replace(/[.\\/]/g, '\\$&')}:3:1\\b`));
  });

  test('an unknown element names file:line:column and suggests the near name', async () => {
    const file = writeTempConfig('<grid>\n  <network>\n    <prot>5701</prot>\n  </network>\n</grid>\n');
    const r = await runMember(['--config', file]);
    assertConfigError(r, new RegExp(`${file.replace(/[.\\/]/g, '\\$&')}:3:5\\b`));
    assert.match(r.stderr, /did you mean <port>\?/);
  });

  test('an unknown attribute and a value of the wrong type name their place', async () => {
    const attr = writeTempConfig('<grid>\n  <network>\n    <port auto-incremnt="true">5701</port>\n  </network>\n</grid>\n');
    const r1 = await runMember(['--config', attr]);
    assertConfigError(r1, new RegExp(`${attr.replace(/[.\\/]/g, '\\$&')}:3:\\d+`));
    assert.match(r1.stderr, /auto-increment/);
    const value = writeTempConfig('<grid>\n  <network>\n    <port>many</port>\n  </network>\n</grid>\n');
    assertConfigError(await runMember(['--config', value]), new RegExp(`${value.replace(/[.\\/]/g, '\\$&')}:3:\\d+`));
  });

  test('a validation rule (backup-count + async-backup-count > 6) names its place', async () => {
    const file = writeTempConfig('<grid>\n  <map name="m">\n    <backup-count>4</backup-count>\n    <async-backup-count>3</async-backup-count>\n  </map>\n</grid>\n');
    assertConfigError(await runMember(['--config', file]), new RegExp(`${file.replace(/[.\\/]/g, '\\$&')}:\\d+:\\d+.*backup`));
  });

  test('a DTD (XXE) and an unresolved placeholder are refused', async () => {
    const dtd = writeTempConfig('<?xml version="1.0"?>\n<!DOCTYPE grid [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n<grid><cluster-name>&x;</cluster-name></grid>\n');
    const r = await runMember(['--config', dtd]);
    assertConfigError(r, new RegExp(`${dtd.replace(/[.\\/]/g, '\\$&')}:2:\\d+`));
    assert.doesNotMatch(r.stderr, /root:/, 'the entity was not expanded');
    const placeholder = writeTempConfig('<grid>\n  <cluster-name>${NOT_DEFINED_ANYWHERE}</cluster-name>\n</grid>\n');
    assertConfigError(await runMember(['--config', placeholder]), /NOT_DEFINED_ANYWHERE/);
  });

  test('bad CP, WAN and persistence settings are refused, naming file:line:column', async () => {
    const cases: [string, string][] = [
      ['<grid>\n  <cp-subsystem>\n    <cp-member-count>2</cp-member-count>\n  </cp-subsystem>\n</grid>\n', 'cp-member-count'],
      ['<grid>\n  <persistence enabled="true">\n    <validation-timeout-seconds>0</validation-timeout-seconds>\n  </persistence>\n</grid>\n', 'validation-timeout-seconds'],
      ['<grid>\n  <persistence enabled="true">\n    <cluster-data-recovery-policy>SOMETIMES</cluster-data-recovery-policy>\n  </persistence>\n</grid>\n', 'cluster-data-recovery-policy'],
      ['<grid>\n  <wan-replication name="to-b">\n    <batch-publisher><cluster-name>b</cluster-name><target-endpoints>h:0</target-endpoints></batch-publisher>\n  </wan-replication>\n</grid>\n', 'target-endpoints'],
    ];
    for (const [xml, what] of cases) {
      const file = writeTempConfig(xml);
      const r = await runMember(['--config', file]);
      assertConfigError(r, new RegExp(what));
      assert.match(r.stderr, new RegExp(`${file.replace(/[.\\/]/g, '\\$&')}:\\d+:\\d+`), `the ${what} refusal names where it was asked for: ${r.stderr}`);
    }
  });

  test('a file that is not UTF-8, declares another encoding, or is too large (even endless) exits 2', async () => {
    assertConfigError(await runMember(['--config', writeTempFile(Buffer.from('<grid><cluster-name>\xe4</cluster-name></grid>', 'latin1'))]), /not valid UTF-8/);
    assertConfigError(await runMember(['--config', writeTempFile(Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?>\n<grid/>'))]), /:1:21: encoding "ISO-8859-1" is not supported/);
    assertConfigError(await runMember(['--config', writeTempFile(Buffer.alloc(2 * 1024 * 1024, 0x20))]), /:1:1: input is larger than 1048576 bytes/);
    if (fs.existsSync('/dev/zero')) assertConfigError(await runMember(['--config', '/dev/zero']), /input is larger than/);
  });

  test('a bad environment value and an unknown GRID_ variable name the variable', async () => {
    assertConfigError(await runMember([], { GRID_NETWORK_PORT_PORT: 'abc' }, emptyDir()), /GRID_NETWORK_PORT_PORT/);
    assertConfigError(await runMember([], { GRID_NO_SUCH_THING: '1' }, emptyDir()), /GRID_NO_SUCH_THING/);
  });

  test('an unknown flag (with a hint), a bad flag value and a missing --config file name the flag', async () => {
    const r = await runMember(['--prot', '5701'], {}, emptyDir());
    assertConfigError(r, /--prot/);
    assert.match(r.stderr, /did you mean --port\?/);
    assertConfigError(await runMember(['--port', '99999'], {}, emptyDir()), /--port/);
    assertConfigError(await runMember(['--log-level', 'LOUD'], {}, emptyDir()), /--log-level/);
    assertConfigError(await runMember(['--config', '/definitely/not/here.xml'], {}, emptyDir()), /--config.*not\/here\.xml/);
  });

  test('an invalid config never binds its port', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const free = (blocker.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => blocker.close(() => resolve()));
    const file = writeTempConfig(`<grid>\n  <network><port auto-increment="false">${free}</port></network>\n  <bogus/>\n</grid>\n`);
    const child = runMember(['--config', file]);
    // While the process lives and after it exits, nothing accepts on that port.
    assert.equal(await connectRefused(free), true);
    assertConfigError(await child, /bogus/);
    assert.equal(await connectRefused(free), true);
  });
});

describe('finding the configuration', () => {
  test('without any configuration REST is off, the log says so, and HTTP gets 403 (JSON log lines)', async () => {
    const m = await startMember({ args: ['--log-format', 'json'], cwd: emptyDir() });
    try {
      const lines = m.stdout().split('\n').filter((l) => l !== '');
      for (const line of lines) {
        const o = JSON.parse(line) as Record<string, unknown>;
        for (const k of ['time', 'level', 'component', 'message']) assert.ok(k in o, `${k} in ${line}`);
      }
      assert.match(m.stdout(), /built-in defaults/);
      await m.waitForOutput(/REST API is disabled/);
      const ex = await send(m.port, 'GET /grid/health HTTP/1.1\r\nHost: x\r\n\r\n', { untilClose: true });
      assert.equal(ex.closed, true);
      assert.equal(ex.responses[0]?.status, 403);
      assert.equal(ex.responses[0]?.text(), '{"status":"fail","message":"REST API is not enabled on this member"}');
    } finally {
      assert.equal(await m.stop(), 0);
    }
  });

  test('./grid.xml in the working directory is used; $GRID_CONFIG is used; GRID_ variables apply on top', async () => {
    const dir = emptyDir();
    fs.writeFileSync(path.join(dir, 'grid.xml'), '<grid><cluster-name>from-cwd</cluster-name><network><rest-api enabled="true"/></network></grid>');
    const cwdMember = await startMember({ cwd: dir });
    const viaEnv = await startMember({
      cwd: emptyDir(),
      env: { GRID_CONFIG: writeTempConfig('<grid><cluster-name>from-file</cluster-name><network><rest-api enabled="true"/></network></grid>'), GRID_CLUSTERNAME: 'from-env' },
    });
    try {
      const state = (port: number, name: string): Promise<number> =>
        request(port, 'POST', '/grid/rest/management/cluster/state', { body: `${name}&` }).then((r) => r.status);
      assert.equal(await state(cwdMember.port, 'from-cwd'), 200);
      assert.equal(await state(cwdMember.port, 'dev'), 403);
      assert.equal(await state(viaEnv.port, 'from-env'), 200);
      assert.equal(await state(viaEnv.port, 'from-file'), 403);
    } finally {
      await cwdMember.stop();
      await viaEnv.stop();
    }
  });

  test("npm start's config/grid.xml serves maps and queues (DATA) over REST", async () => {
    const m = await startMember({ args: ['--config', 'config/grid.xml', '--port', '0'], cwd: REPO_ROOT });
    try {
      // The file's join list names 127.0.0.1:5701-5703: until the member has found no cluster there
      // and founded its own, it serves no data (503, "cluster not ready"), and says so when probed.
      await waitFor(async () => (await request(m.port, 'GET', '/grid/health/ready')).status === 200, 'the member to be ready');
      assert.equal((await request(m.port, 'POST', '/grid/rest/maps/m/k', { body: 'hello' })).status, 200);
      const r = await request(m.port, 'GET', '/grid/rest/maps/m/k');
      assert.equal(r.status, 200);
      assert.equal(r.text(), 'hello');
      assert.equal((await request(m.port, 'POST', '/grid/rest/queues/q', { body: 'i' })).status, 200);
      const info = (await request(m.port, 'GET', '/grid/rest/cluster')).json() as { members: { address: string }[] };
      assert.equal(info.members[0]!.address, `[127.0.0.1]:${m.port}`, 'public-address from the file');
    } finally {
      assert.equal(await m.stop(), 0);
    }
  });

  test('advanced networking: REST on its own port, the member protocol on another, each refusing the other', async () => {
    // Ports in XML are 1..65535: take two the OS says are free (auto-increment covers a lost race).
    const [p1, p2] = await freePorts(2);
    const m = await startMember({
      xml: `<grid><advanced-network enabled="true">
        <member-server-socket-endpoint-config><port auto-increment="true">${p1}</port></member-server-socket-endpoint-config>
        <rest-server-socket-endpoint-config><port auto-increment="true">${p2}</port>
          <endpoint-groups><endpoint-group name="DATA" enabled="true"/></endpoint-groups>
        </rest-server-socket-endpoint-config>
      </advanced-network></grid>`,
    });
    try {
      const restPort = Number((await m.waitForOutput(/REST listening on \[[^\]]+\]:(\d+)/))[1]);
      const memberPort = Number((await m.waitForOutput(/member protocol listening on \[[^\]]+\]:(\d+)/))[1]);
      assert.notEqual(restPort, memberPort);
      assert.equal((await request(restPort, 'POST', '/grid/rest/maps/m/k', { body: 'v' })).status, 200, 'declaring the REST endpoint enables REST and its groups');
      assert.equal((await request(restPort, 'GET', '/grid/health')).status, 200);
      const httpOnMember = await exchangeRaw(memberPort, 'GET /grid/health HTTP/1.1\r\nHost: x\r\n\r\n');
      assert.equal(httpOnMember.closed, true);
      assert.equal(httpOnMember.data.length, 0, 'HTTP on the member endpoint is closed unanswered');
      const hello = encodeFrame({ messageType: HANDSHAKE_REQUEST, callId: 3 }, encodeHandshakeRequest({
        protocolVersionMin: PROTOCOL_VERSION_MIN, protocolVersionMax: PROTOCOL_VERSION, clusterName: 'dev', memberUuid: '0f8fad5b-d9cb-469f-a165-70867728950e',
        memberVersion: '0.1.0', partitionCount: 271, addresses: [], identity: null,
      }));
      const onRest = await exchangeRaw(restPort, [PREAMBLE, hello]);
      assert.equal(onRest.data.length, 0, 'the member protocol on the REST endpoint is closed unanswered');
      const frame = await firstFrame(memberPort, [PREAMBLE, hello]);
      const answer = decodeHandshakeResponse(frame.payload);
      assert.equal(answer.kind, 'accepted', 'the member endpoint answers the handshake');
    } finally {
      assert.equal(await m.stop(), 0);
    }
  });
});

describe('stopping', () => {
  test('a connection that never sends a byte does not hold up SIGTERM', async () => {
    const m = await startMember();
    const silent = net.connect({ host: '127.0.0.1', port: m.port });
    await new Promise<void>((resolve) => silent.once('connect', () => resolve()));
    const closed = new Promise<void>((resolve) => silent.once('close', () => resolve()));
    silent.on('error', () => {});
    // Well under the 10 s sniff timeout: the stop must close the silent connection, not wait it out.
    assert.equal(await m.stop('SIGTERM', 5_000), 0);
    await closed;
  });

  test('SIGTERM: waiting polls get 204, an in-flight request completes, no new connection is accepted, exit 0', async () => {
    const m = await startMember({ args: ['--rest-groups', 'DATA'] });
    const polls: Connection[] = [];
    for (let i = 0; i < 3; i++) {
      const c = await Connection.open(m.port);
      c.send('DELETE', '/grid/rest/queues/stopping/60');
      polls.push(c);
    }
    await waitFor(async () => (await metrics(m.port)).waitingPolls === 3, '3 waiting polls');
    // An upload the member has accepted (it said 100 Continue) but whose body has not arrived yet.
    const upload = await Connection.open(m.port);
    upload.write('POST /grid/rest/maps/m/in-flight HTTP/1.1\r\nHost: x\r\nContent-Length: 8\r\nExpect: 100-continue\r\n\r\n');
    await upload.waitForText('100 Continue');

    const start = Date.now();
    m.child.kill('SIGTERM');
    await m.waitForOutput(/stopping: SIGTERM received/);
    for (const c of polls) {
      const [r] = await c.responses(1, 5000);
      assert.equal(r!.statusLine, 'HTTP/1.1 204 No Content');
      assert.equal(r!.headers['content-length'], '0');
    }
    assert.ok(Date.now() - start < 5000, 'the polls were answered at once, not at their timeout');
    assert.equal(await connectRefused(m.port), true, 'the port no longer accepts connections');
    assert.equal(m.child.exitCode, null, 'the member waits for the in-flight request');
    upload.write('complete');
    const [done] = await upload.responses(1, 5000);
    assert.equal(done!.status, 200);
    assert.equal(done!.headers.connection?.toLowerCase(), 'close');
    assert.equal(await m.waitForExit(10_000), 0);
    assert.match(m.stdout(), /stopped/);
    for (const c of [...polls, upload]) c.destroy();
  });

  test('SIGINT: waiting polls get 204 and the process exits 0', async () => {
    const m = await startMember({ args: ['--rest-groups', 'DATA'] });
    const c = await Connection.open(m.port);
    c.send('GET', '/grid/rest/queues/stopping/60');
    await waitFor(async () => (await metrics(m.port)).waitingPolls === 1, 'the poll to wait');
    m.child.kill('SIGINT');
    const [r] = await c.responses(1, 5000);
    assert.equal(r!.status, 204);
    assert.equal(await m.waitForExit(10_000), 0);
    assert.match(m.stdout(), /stopping: SIGINT received/);
    c.destroy();
  });
});

describe('ports', () => {
  /** A port P held by a server of ours, with P + 1 free at the time of the check. */
  async function holdPortWithFreeNext(): Promise<{ blocker: net.Server; port: number }> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const blocker = net.createServer();
      await new Promise<void>((resolve) => blocker.listen({ port: 0, host: '0.0.0.0', exclusive: true }, resolve));
      const port = (blocker.address() as net.AddressInfo).port;
      const probe = net.createServer();
      const nextFree = await new Promise<boolean>((resolve) => {
        probe.once('error', () => resolve(false));
        probe.listen({ port: port + 1, host: '0.0.0.0', exclusive: true }, () => resolve(true));
      });
      if (nextFree) {
        await new Promise<void>((resolve) => probe.close(() => resolve()));
        return { blocker, port };
      }
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
    throw new Error('no port pair found');
  }

  test('auto-increment: a taken port is skipped and the next one is bound', async () => {
    const { blocker, port } = await holdPortWithFreeNext();
    try {
      const m = await startMember({ args: ['--rest', '--port', String(port)] });
      try {
        // Usually port + 1; a test file running beside this one may take that port between the
        // probe above and the member's bind (seen once), and then the member rightly goes on.
        assert.ok(m.port > port && m.port <= port + 100, `bound ${m.port}, the taken one was ${port}`);
        assert.equal((await request(m.port, 'GET', '/grid/health')).status, 200);
      } finally {
        assert.equal(await m.stop(), 0);
      }
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });

  test('without auto-increment a taken port stops the start with a message and a non-zero exit', async () => {
    const { blocker, port } = await holdPortWithFreeNext();
    try {
      const file = writeTempConfig('<grid><network><port auto-increment="false">5701</port></network></grid>');
      const r = await runMember(['--config', file, '--port', String(port)], {}, emptyDir());
      assert.notEqual(r.code, 0);
      assert.notEqual(r.code, null);
      assert.match(r.stderr, new RegExp(`cannot (start|listen).*${port}`));
      assert.equal(await connectRefused(port + 1), true, 'the next port was not taken');
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });
});
