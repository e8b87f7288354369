// The web console at /grid/console/ (spec/console.md): its files, group CLUSTER_READ like the views
// it reads, and its session (`/grid/console/session`: GET who am I, POST log in, DELETE log out).
// Switched off by `<rest-api><console enabled="false"/>` (then 404, as a path that does not exist).
// Every file answer carries a strict Content-Security-Policy: the page loads nothing but the
// member's own files and talks to nothing but the member.
import type { MemberApi } from '../../member/member-api.js';
import { ConsoleAssets } from '../../console/assets.js';
import { sessionToken } from '../../console/access.js';
import { empty, fail, json, type HttpReply } from '../reply.js';
import type { HttpRequest } from '../request.js';

/** One set per process: the files are the installation's, the same for every member it runs. */
const assets = new ConsoleAssets();

/** The headers every console answer carries (a 304 too: it stands for the full answer). */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  // Revalidated on every load (a new member version brings new files); the ETag makes that a 304.
  'cache-control': 'no-cache',
};

/** A login body is small; anything larger is refused unread: 4 KiB. */
const LOGIN_BODY_BYTES_MAX = 4096;

/** `GET /grid/console`: the page lives under the slash (its files are named relative to it). */
export function consoleRoot(_req: HttpRequest, api: MemberApi): HttpReply {
  if (!api.console.enabled) return empty(404);
  return empty(301, { location: '/grid/console/', ...CONSOLE_HEADERS });
}

/** `GET /grid/console/` and `/grid/console/{file}`. */
export function consoleFile(req: HttpRequest, api: MemberApi): HttpReply {
  if (!api.console.enabled) return empty(404);
  const tail = req.segments.slice(2);
  const name = tail.length === 0 || (tail.length === 1 && tail[0] === '') ? 'index.html' : tail.length <= 2 ? tail.join('/') : '';
  const file = assets.get(name);
  if (file === null) {
    if (name === 'index.html') return fail(503, 'the console is not built on this member: run npm run build', CONSOLE_HEADERS);
    return empty(404, CONSOLE_HEADERS);
  }
  const headers = { ...CONSOLE_HEADERS, etag: file.etag };
  const match = req.header('if-none-match');
  if (match !== undefined && match.split(',').some((t) => t.trim() === file.etag || t.trim() === '*')) return empty(304, headers);
  return { status: 200, contentType: file.contentType, headers, body: file.body };
}

const NO_STORE = { 'cache-control': 'no-store' };

/** `GET /grid/console/session`: who the page is (security off: nobody needs to be). */
export function sessionGet(req: HttpRequest, api: MemberApi): HttpReply {
  if (!api.console.enabled) return empty(404);
  if (!api.console.security) return json(200, api.console.describe(null), NO_STORE);
  if (req.console === undefined) return json(401, { status: 'fail', message: 'log in: security is on' }, NO_STORE);
  return json(200, api.console.describe({ username: req.console.username, role: req.console.role as 'admin' }), NO_STORE);
}

/** `POST /grid/console/session` with `{"username","password"}`: a session cookie, 401, or 429 with Retry-After. */
export function sessionLogin(req: HttpRequest, api: MemberApi): HttpReply {
  const access = api.console;
  if (!access.enabled) return empty(404);
  if (!access.security) return fail(400, 'security is off: the console needs no login');
  const refusal = access.requestRefusal(req.header('x-grid-console'), req.header('host'), req.header('origin'));
  if (refusal !== null) return fail(403, refusal);
  const body = req.body;
  if (body === null || body.length === 0 || body.length > LOGIN_BODY_BYTES_MAX) return fail(400, `the body must be {"username","password"} (at most ${LOGIN_BODY_BYTES_MAX} bytes)`);
  let v: unknown;
  try {
    v = JSON.parse(body.toString('utf8'));
  } catch {
    return fail(400, 'the body is not JSON: send {"username","password"}');
  }
  const o = v as { username?: unknown; password?: unknown };
  if (typeof v !== 'object' || v === null || typeof o.username !== 'string' || typeof o.password !== 'string') return fail(400, 'the body must be {"username","password"}, both strings');
  const out = access.login(o.username, o.password, req.remoteAddress);
  if (!out.ok) {
    if (out.status === 429) return fail(429, `too many failed logins from ${req.remoteAddress}: try again in ${out.retryAfterSeconds} s`, { 'retry-after': String(out.retryAfterSeconds) });
    return fail(401, 'wrong user or password');
  }
  return json(200, access.describe(out.user), { 'set-cookie': access.cookie(out.token), ...NO_STORE });
}

/** `DELETE /grid/console/session`: ends the session of the cookie sent. */
export function sessionLogout(req: HttpRequest, api: MemberApi): HttpReply {
  const access = api.console;
  if (!access.enabled) return empty(404);
  const token = req.console?.token ?? sessionToken(req.header('cookie'));
  const ended = token !== null && access.logout(token, req.remoteAddress);
  return json(200, { status: 'success', message: ended ? 'logged out' : 'no session' }, { 'set-cookie': access.cookie(null), ...NO_STORE });
}
