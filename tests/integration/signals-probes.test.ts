// Signals and probes against the built member as a real process:
//   - SIGHUP re-reads the TLS key and certificate: a new connection sees the new certificate, an
//     unreadable file keeps the old one (logged), and the member keeps serving;
//   - SIGQUIT writes a diagnostic report into the working directory and the member keeps running;
//   - SIGUSR1 does not open Node's inspector (nothing listens on 127.0.0.1:9229) and is logged;
//   - with the REST API off, grid.http.healthcheck.enabled serves the health group (probes work)
//     while every other path still answers 403;
//   - --print-config masks passwords unless --show-secrets.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { REPO_ROOT, runMember, startMember, writeTempConfig } from '../harness/member-process.js';
import { request } from '../harness/raw-http.js';
import { until } from '../harness/cluster.js';

const FIXTURES = path.join(REPO_ROOT, 'tests', 'fixtures', 'tls');

/** The SHA-256 fingerprint of the certificate a new TLS connection to the port is shown. */
function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const fp = socket.getPeerCertificate().fingerprint256;
      socket.destroy();
      resolve(fp);
    });
    socket.on('error', reject);
    socket.setTimeout(10_000, () => socket.destroy(new Error('timed out')));
  });
}

const fingerprintOf = (pem: Buffer): string => new crypto.X509Certificate(pem).fingerprint256;

describe('signals', () => {
  test('SIGHUP reloads the TLS certificate for new connections; an unreadable file keeps the old one', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'grid-hup-'));
    const key = path.join(dir, 'member.key');
    const cert = path.join(dir, 'member.crt');
    fs.copyFileSync(path.join(FIXTURES, 'server.key'), key);
    fs.copyFileSync(path.join(FIXTURES, 'server.crt'), cert);
    const xml = `<grid><network><rest-api enabled="true"/><ssl enabled="true" key-file="${key}" cert-file="${cert}"/></network></grid>`;
    const m = await startMember({ xml });
    try {
      const first = fingerprintOf(fs.readFileSync(path.join(FIXTURES, 'server.crt')));
      const second = fingerprintOf(fs.readFileSync(path.join(FIXTURES, 'client.crt')));
      assert.notEqual(first, second);
      assert.equal(await servedFingerprint(m.port), first);
      fs.copyFileSync(path.join(FIXTURES, 'client.key'), key);
      fs.copyFileSync(path.join(FIXTURES, 'client.crt'), cert);
      m.child.kill('SIGHUP');
      await m.waitForOutput(/SIGHUP: TLS certificates reloaded/);
      assert.equal(await servedFingerprint(m.port), second);
      fs.rmSync(cert);
      m.child.kill('SIGHUP');
      await m.waitForOutput(/SIGHUP: TLS files could not be read again .*the certificates in use stay/);
      assert.equal(await servedFingerprint(m.port), second);
      assert.equal(m.child.exitCode, null, 'still running');
    } finally {
      await m.stop('SIGKILL');
    }
  });

  test('SIGHUP without TLS says there is nothing to reload; SIGQUIT writes a report and keeps running; SIGUSR1 opens no inspector', async () => {
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'grid-quit-'));
    const m = await startMember({ args: ['--rest'], cwd });
    try {
      m.child.kill('SIGHUP');
      await m.waitForOutput(/SIGHUP: no port speaks TLS; nothing to reload/);
      m.child.kill('SIGQUIT');
      const [, file] = (await m.waitForOutput(/SIGQUIT: diagnostic report written to (\S+);/)) as unknown as [string, string];
      assert.equal(path.dirname(file), fs.realpathSync(cwd), 'written to the working directory');
      const report = JSON.parse(fs.readFileSync(file, 'utf8')) as { header?: unknown; javascriptStack?: unknown; libuv?: unknown };
      assert.ok(report.header !== undefined && report.javascriptStack !== undefined && report.libuv !== undefined, 'a Node diagnostic report');
      assert.equal((report as Record<string, unknown>)['environmentVariables'], undefined, 'the environment (secrets) is left out');
      assert.equal(fs.statSync(file).mode & 0o777, 0o600, 'readable by the member user only');
      assert.equal((await request(m.port, 'GET', '/grid/health/node-state')).status, 200, 'still serving after SIGQUIT');
      m.child.kill('SIGUSR1');
      await m.waitForOutput(/SIGUSR1 ignored/);
      const inspector = await new Promise<string>((resolve) => {
        const s = net.connect({ host: '127.0.0.1', port: 9229 }, () => {
          s.destroy();
          resolve('connected');
        });
        s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
      });
      assert.equal(inspector, 'ECONNREFUSED', 'nothing listens on the inspector port');
      assert.doesNotMatch(m.stderr(), /Debugger listening/);
      assert.equal((await request(m.port, 'GET', '/grid/health/node-state')).status, 200, 'still serving after SIGUSR1');
      assert.equal(await m.stop('SIGTERM'), 0);
    } finally {
      await m.stop('SIGKILL');
    }
  });
});

describe('probes with the REST API off', () => {
  test('grid.http.healthcheck.enabled serves /grid/health and below; everything else stays 403', async () => {
    const xml = `<grid><properties><property name="grid.http.healthcheck.enabled">true</property></properties></grid>`;
    const m = await startMember({ xml });
    try {
      await until('the member is ready', 15_000, async () => ((await request(m.port, 'GET', '/grid/health/ready')).status === 200 ? true : null));
      const h = await request(m.port, 'GET', '/grid/health');
      assert.equal(h.status, 200);
      assert.equal((h.json() as { nodeState: string }).nodeState, 'ACTIVE');
      assert.equal((await request(m.port, 'GET', '/grid/health/node-state')).json(), 'ACTIVE');
      assert.equal((await request(m.port, 'HEAD', '/grid/health')).headers['grid-nodestate'], 'ACTIVE');
      for (const target of ['/grid/rest/cluster', '/grid/rest/maps/m/k', '/grid/healthy']) {
        const r = await request(m.port, 'GET', target);
        assert.equal(r.status, 403, target);
        assert.deepEqual(r.json(), { status: 'fail', message: 'REST API is not enabled on this member' });
      }
    } finally {
      await m.stop('SIGKILL');
    }
  });

  test('without the property, REST off answers every probe 403 (the default stays closed)', async () => {
    const m = await startMember({});
    try {
      assert.equal((await request(m.port, 'GET', '/grid/health/ready')).status, 403);
    } finally {
      await m.stop('SIGKILL');
    }
  });
});

describe('--print-config', () => {
  test('masks realm passwords unless --show-secrets', async () => {
    const file = writeTempConfig(`<grid><security enabled="true"><realms><realm name="r">
      <authentication><simple><user username="admin" password="admin-secret-9"/></simple></authentication>
      <identity><username-password username="member" password="member-secret-9"/></identity>
    </realm></realms><member-authentication realm="r"/></security></grid>`);
    const masked = await runMember(['--config', file, '--print-config']);
    assert.equal(masked.code, 0);
    assert.doesNotMatch(masked.stdout, /secret-9/);
    assert.match(masked.stdout, /password="\*\*\*\*"/);
    const shown = await runMember(['--config', file, '--print-config', '--show-secrets']);
    assert.equal(shown.code, 0);
    assert.match(shown.stdout, /admin-secret-9/);
    assert.match(shown.stdout, /member-secret-9/);
  });
});
