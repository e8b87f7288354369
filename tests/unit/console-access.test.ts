// The console's access rules (src/console/access.ts, spec/console.md "Security"): logins with the
// realm's users, the throttle per address, sessions that slide, the cookie, the header, Host and
// Origin checks, and what each role may call.
import test from 'node:test';
import assert from 'node:assert/strict';
import { ConsoleAccess, roleNeeded, roleRefusal, sessionToken, LOGIN_WINDOW_MS, SESSION_TTL_MS, type ConsoleAccessHost } from '../../src/console/access.js';
import { classifyGroup } from '../../src/http/groups.js';

function access(over: Partial<ConsoleAccessHost> = {}): { a: ConsoleAccess; clock: { now: number }; events: string[]; audits: string[] } {
  const clock = { now: 1_700_000_000_000 };
  const events: string[] = [];
  const audits: string[] = [];
  let n = 0;
  const a = new ConsoleAccess({
    enabled: true,
    security: true,
    tls: false,
    clusterName: 'dev',
    memberAddress: () => '10.0.0.1:5701',
    memberUuid: 'u1',
    hostNames: ['grid-1.example'],
    users: [
      { username: 'alice', role: 'admin' },
      { username: 'olga', role: 'operator' },
      { username: 'rita', role: 'read-only' },
    ],
    accepts: (u, p) => p === `${u}-pw`,
    nowMs: () => clock.now,
    randomToken: () => `token-${++n}-abcdefghijklmnop`,
    record: (kind, message) => events.push(`${kind}: ${message}`),
    audit: (message, fields) => audits.push(`${message} ${JSON.stringify(fields)}`),
    ...over,
  });
  return { a, clock, events, audits };
}

test('a login with a realm user opens a session of that user\'s role; a wrong password is 401 and goes on the timeline without the password', () => {
  const { a, events, audits } = access();
  const ok = a.login('olga', 'olga-pw', '10.1.1.1');
  assert.equal(ok.ok, true);
  if (!ok.ok) return;
  assert.deepEqual(a.lookup(ok.token)?.user, { username: 'olga', role: 'operator' });
  const bad = a.login('olga', 'nope', '10.1.1.1');
  assert.deepEqual(bad, { ok: false, status: 401, retryAfterSeconds: 0 });
  assert.deepEqual(events, ["login: 'olga' logged in to the console (operator)", "login-refused: console login of 'olga' refused"]);
  assert.equal(audits.some((l) => l.includes('nope')), false, 'the password is never written');
  assert.equal(a.lookup('token-unknown-abcdefghijklmnop'), null);
});

test('five failed logins from one address within 60 s shut that address out for 60 s (429 with Retry-After); other addresses are not slowed', () => {
  const { a, clock } = access();
  for (let i = 0; i < 4; i++) assert.equal(a.login('alice', 'x', '10.2.2.2').ok, false);
  clock.now += 10_000;
  assert.deepEqual(a.login('alice', 'x', '10.2.2.2'), { ok: false, status: 401, retryAfterSeconds: 0 });
  const shut = a.login('alice', 'alice-pw', '10.2.2.2');
  assert.deepEqual(shut, { ok: false, status: 429, retryAfterSeconds: 60 }, 'even the right password waits');
  assert.equal(a.login('alice', 'alice-pw', '10.3.3.3').ok, true, 'another address logs in');
  clock.now += LOGIN_WINDOW_MS - 1000;
  assert.deepEqual(a.login('alice', 'alice-pw', '10.2.2.2'), { ok: false, status: 429, retryAfterSeconds: 1 });
  clock.now += 1000;
  assert.equal(a.login('alice', 'alice-pw', '10.2.2.2').ok, true);
});

test('failures spread over more than 60 s do not shut an address out', () => {
  const { a, clock } = access();
  for (let i = 0; i < 10; i++) {
    assert.equal(a.login('alice', 'x', '10.4.4.4').ok, false);
    clock.now += 15_000;
  }
  assert.equal(a.login('alice', 'alice-pw', '10.4.4.4').ok, true);
});

test('a session lasts 8 h from its last use; the cookie is HttpOnly, SameSite=Strict, Secure over TLS, and renewed hourly while used', () => {
  const { a, clock } = access();
  const out = a.login('rita', 'rita-pw', '10.5.5.5');
  assert.ok(out.ok);
  if (!out.ok) return;
  clock.now += SESSION_TTL_MS - 1;
  const used = a.lookup(out.token);
  assert.equal(used?.renewCookie, true, 'more than an hour after the cookie was set');
  assert.equal(a.lookup(out.token)?.renewCookie, false);
  clock.now += SESSION_TTL_MS;
  assert.equal(a.lookup(out.token), null, 'expired 8 h after its last use');
  assert.equal(a.cookie(out.token), `grid_console=${out.token}; Max-Age=28800; Path=/grid; HttpOnly; SameSite=Strict`);
  assert.equal(a.cookie(null), 'grid_console=; Max-Age=0; Path=/grid; HttpOnly; SameSite=Strict');
  assert.match(access({ tls: true }).a.cookie('t'), /; Secure$/);
});

test('peek does not renew a session; a used session is the last one evicted', () => {
  const { a, clock } = access();
  const out = a.login('alice', 'alice-pw', '10.7.7.7');
  assert.ok(out.ok);
  if (!out.ok) return;
  clock.now += SESSION_TTL_MS - 1;
  assert.deepEqual(a.peek(out.token), { username: 'alice', role: 'admin' });
  clock.now += 1;
  assert.equal(a.peek(out.token), null, 'peeking did not extend it');
  assert.equal(a.lookup(out.token), null);
});

test('logout ends the session and says so on the timeline', () => {
  const { a, events } = access();
  const out = a.login('alice', 'alice-pw', '10.6.6.6');
  assert.ok(out.ok);
  if (!out.ok) return;
  assert.equal(a.logout(out.token, '10.6.6.6'), true);
  assert.equal(a.lookup(out.token), null);
  assert.equal(a.logout(out.token, '10.6.6.6'), false);
  assert.equal(events.at(-1), "logout: 'alice' logged out of the console");
});

test('a session request needs X-Grid-Console: 1, a Host naming the member, and a same-origin Origin (DNS rebinding, CSRF)', () => {
  const { a } = access();
  assert.equal(a.requestRefusal('1', '10.0.0.1:5701', undefined), null);
  assert.equal(a.requestRefusal('1', 'localhost:5701', 'http://localhost:5701'), null);
  assert.equal(a.requestRefusal('1', '[::1]:5701', undefined), null);
  assert.equal(a.requestRefusal('1', 'grid-1.example:8080', 'https://grid-1.example:8080'), null);
  assert.match(a.requestRefusal(undefined, '10.0.0.1:5701', undefined) ?? '', /X-Grid-Console: 1/);
  assert.match(a.requestRefusal('0', '10.0.0.1:5701', undefined) ?? '', /X-Grid-Console: 1/);
  assert.match(a.requestRefusal('1', 'evil.example:5701', undefined) ?? '', /Host/);
  assert.match(a.requestRefusal('1', undefined, undefined) ?? '', /Host/);
  assert.match(a.requestRefusal('1', '10.0.0.1:5701', 'http://evil.example') ?? '', /Origin/);
  assert.match(a.requestRefusal('1', '10.0.0.1:5701', 'null') ?? '', /Origin/);
});

test('the session cookie is read from a Cookie header among others; a malformed token is none', () => {
  assert.equal(sessionToken('a=1; grid_console=abcdefghijklmnopqrst; b=2'), 'abcdefghijklmnopqrst');
  assert.equal(sessionToken('grid_console=short'), null);
  assert.equal(sessionToken('grid_console=has space in it here'), null);
  assert.equal(sessionToken(undefined), null);
  assert.equal(sessionToken('other=abcdefghijklmnopqrst'), null);
});

test('roles: read-only changes nothing; operator changes state, WAN, log level and data; admin the rest', () => {
  const need = (method: string, path: string): string => {
    const segments = path.split('/').slice(1);
    return roleNeeded(classifyGroup(method, segments), method, segments);
  };
  assert.equal(need('GET', '/grid/rest/cluster/view'), 'read-only');
  assert.equal(need('GET', '/grid/rest/maps/m/k'), 'read-only');
  assert.equal(need('GET', '/grid/rest/queues/q/size'), 'read-only');
  assert.equal(need('GET', '/grid/rest/queues/q/5'), 'operator', 'a poll takes an item');
  assert.equal(need('POST', '/grid/rest/management/cluster/state'), 'read-only');
  assert.equal(need('POST', '/grid/rest/maps/m/k'), 'operator');
  assert.equal(need('DELETE', '/grid/rest/maps/m'), 'operator');
  assert.equal(need('POST', '/grid/rest/management/cluster/changeState'), 'operator');
  assert.equal(need('POST', '/grid/rest/log-level'), 'operator');
  assert.equal(need('POST', '/grid/rest/log-level/reset'), 'operator');
  assert.equal(need('POST', '/grid/rest/wan/pausePublisher'), 'operator');
  assert.equal(need('POST', '/grid/rest/management/cluster/memberShutdown'), 'admin');
  assert.equal(need('POST', '/grid/rest/management/cluster/clusterShutdown'), 'admin');
  assert.equal(need('POST', '/grid/rest/management/cluster/forceStart'), 'admin');
  assert.equal(need('POST', '/grid/rest/cp-subsystem/reset'), 'admin');
  assert.equal(need('GET', '/grid/rest/cp-subsystem/groups'), 'read-only');
  assert.equal(need('POST', '/grid/rest/config/tcp-ip/member-list'), 'admin');
  assert.equal(need('DELETE', '/grid/console/session'), 'read-only');
  assert.match(roleRefusal('read-only', classifyGroup('POST', ['grid', 'rest', 'maps', 'm', 'k']), 'POST', ['grid', 'rest', 'maps', 'm', 'k']) ?? '', /the read-only role may not POST \/grid\/rest\/maps\/m\/k: it needs operator/);
  assert.equal(roleRefusal('admin', 'CP', 'POST', ['grid', 'rest', 'cp-subsystem', 'reset']), null);
});

test('GET /grid/console/session tells the page who it is', () => {
  const { a } = access({ security: false });
  assert.deepEqual(a.describe(null), { security: false, user: null, role: 'admin', clusterName: 'dev', member: '10.0.0.1:5701', memberUuid: 'u1' });
});
