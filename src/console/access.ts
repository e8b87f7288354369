// Who may use the console, and as what (spec/console.md "Security"). With security on, a login
// with a user of the member-authentication realm opens a session: a random token in an HttpOnly,
// SameSite=Strict cookie, 8 hours from its last use. A session stands in for credentials only on
// requests that carry `X-Grid-Console: 1` and whose Host (and Origin, when sent) name the member
// itself; its role bounds what it may call, checked by the member on every request (roleRefusal).
// Five failed logins from one address within 60 s shut that address out for 60 s.
// No I/O: the clock, the random source, the credential check and the timeline are passed in.
import type { ConsoleRole, EndpointGroup } from '../config/types.js';
import type { EventKind } from '../util/timeline.js';

export const SESSION_COOKIE = 'grid_console';
/** A session lasts this long after its last use: 8 h. */
export const SESSION_TTL_MS = 8 * 3600_000;
/** Sessions held at most (the oldest goes first): 1,000. */
export const SESSIONS_MAX = 1000;
/** Failed logins from one address within the window that shut it out. */
export const LOGIN_FAILURES_MAX = 5;
export const LOGIN_WINDOW_MS = 60_000;
/** Addresses whose failures are remembered at most (the oldest goes first): 10,000. */
export const THROTTLED_ADDRESSES_MAX = 10_000;
/** The browser's cookie is renewed at most this often while the session is used: 1 h. */
export const COOKIE_RENEW_MS = 3600_000;

export interface ConsoleUser {
  readonly username: string;
  readonly role: ConsoleRole;
}

export interface ConsoleAccessHost {
  readonly enabled: boolean;
  readonly security: boolean;
  /** REST is served over TLS: the cookie is Secure. */
  readonly tls: boolean;
  readonly clusterName: string;
  /** `host:port` and UUID of this member, as the page shows them. */
  memberAddress(): string;
  readonly memberUuid: string;
  /** Host names (besides IP literals and localhost) that name this member: its public address, its host. */
  readonly hostNames: readonly string[];
  /** The realm's users with their roles (their passwords are checked by `accepts`). */
  readonly users: readonly ConsoleUser[];
  /** Checks a user's password as REST credentials are checked (constant time, audited). */
  accepts(username: string, password: string, remoteAddress: string): boolean;
  nowMs(): number;
  randomToken(): string;
  record(kind: EventKind, message: string, actor: string): void;
  /** A line for the log's audit component. */
  audit(message: string, fields: Readonly<Record<string, string>>): void;
}

interface Session {
  readonly user: ConsoleUser;
  expiresAtMs: number;
  cookieSetAtMs: number;
}

export type LoginOutcome =
  | { readonly ok: true; readonly token: string; readonly user: ConsoleUser }
  | { readonly ok: false; readonly status: 401 | 429; readonly retryAfterSeconds: number };

export class ConsoleAccess {
  private readonly sessions = new Map<string, Session>();
  private readonly failures = new Map<string, number[]>();
  private readonly blockedUntil = new Map<string, number>();

  constructor(private readonly host: ConsoleAccessHost) {}

  get enabled(): boolean {
    return this.host.enabled;
  }

  get security(): boolean {
    return this.host.security;
  }

  /** What `GET /grid/console/session` answers for this user (null: security off). */
  describe(user: ConsoleUser | null): Record<string, unknown> {
    return {
      security: this.host.security,
      user: user?.username ?? null,
      role: user?.role ?? 'admin',
      clusterName: this.host.clusterName,
      member: this.host.memberAddress(),
      memberUuid: this.host.memberUuid,
    };
  }

  login(username: string, password: string, remoteAddress: string): LoginOutcome {
    const now = this.host.nowMs();
    const blocked = this.blockedUntil.get(remoteAddress);
    if (blocked !== undefined && blocked > now) {
      return { ok: false, status: 429, retryAfterSeconds: Math.max(1, Math.ceil((blocked - now) / 1000)) };
    }
    if (blocked !== undefined) this.blockedUntil.delete(remoteAddress);
    const user = this.host.users.find((u) => u.username === username);
    const accepted = this.host.accepts(username, password, remoteAddress);
    if (!accepted || user === undefined) {
      const name = username.slice(0, 64);
      this.host.audit('console login refused', { user: name, source: remoteAddress, outcome: 'failure' });
      this.host.record('login-refused', `console login of '${name}' refused`, `from ${remoteAddress}`);
      const recent = (this.failures.get(remoteAddress) ?? []).filter((t) => now - t < LOGIN_WINDOW_MS);
      recent.push(now);
      this.failures.delete(remoteAddress);
      if (recent.length >= LOGIN_FAILURES_MAX) {
        this.blockedUntil.set(remoteAddress, now + LOGIN_WINDOW_MS);
        this.host.audit('console logins refused for 60 s', { source: remoteAddress, failures: String(recent.length) });
      } else {
        this.failures.set(remoteAddress, recent);
      }
      trim(this.failures, THROTTLED_ADDRESSES_MAX);
      trim(this.blockedUntil, THROTTLED_ADDRESSES_MAX);
      return { ok: false, status: 401, retryAfterSeconds: 0 };
    }
    this.failures.delete(remoteAddress);
    const token = this.host.randomToken();
    if (this.sessions.size >= SESSIONS_MAX) {
      // Expired sessions go first, then the least recently used (lookup re-inserts a used one).
      for (const [t, s] of this.sessions) if (s.expiresAtMs <= now) this.sessions.delete(t);
    }
    this.sessions.set(token, { user, expiresAtMs: now + SESSION_TTL_MS, cookieSetAtMs: now });
    trim(this.sessions, SESSIONS_MAX);
    this.host.audit('console login', { user: user.username, role: user.role, source: remoteAddress, outcome: 'success' });
    this.host.record('login', `'${user.username}' logged in to the console (${user.role})`, `'${user.username}' from ${remoteAddress}`);
    return { ok: true, token, user };
  }

  logout(token: string, remoteAddress: string): boolean {
    const s = this.sessions.get(token);
    if (s === undefined) return false;
    this.sessions.delete(token);
    this.host.audit('console logout', { user: s.user.username, source: remoteAddress });
    this.host.record('logout', `'${s.user.username}' logged out of the console`, `'${s.user.username}' from ${remoteAddress}`);
    return true;
  }

  /** The user of a live session, without renewing it (null when unknown or expired). */
  peek(token: string): ConsoleUser | null {
    const s = this.sessions.get(token);
    return s === undefined || s.expiresAtMs <= this.host.nowMs() ? null : s.user;
  }

  /** The session of a token, renewed (8 h from now); null when unknown or expired. */
  lookup(token: string): { readonly user: ConsoleUser; readonly renewCookie: boolean } | null {
    const s = this.sessions.get(token);
    if (s === undefined) return null;
    const now = this.host.nowMs();
    if (s.expiresAtMs <= now) {
      this.sessions.delete(token);
      return null;
    }
    s.expiresAtMs = now + SESSION_TTL_MS;
    // Most recently used last: the oldest in the map is the least recently used.
    this.sessions.delete(token);
    this.sessions.set(token, s);
    const renewCookie = now - s.cookieSetAtMs >= COOKIE_RENEW_MS;
    if (renewCookie) s.cookieSetAtMs = now;
    return { user: s.user, renewCookie };
  }

  /** The `Set-Cookie` value of a session (or of its end, when token is null). */
  cookie(token: string | null): string {
    const attrs = `Path=/grid; HttpOnly; SameSite=Strict${this.host.tls ? '; Secure' : ''}`;
    return token === null ? `${SESSION_COOKIE}=; Max-Age=0; ${attrs}` : `${SESSION_COOKIE}=${token}; Max-Age=${SESSION_TTL_MS / 1000}; ${attrs}`;
  }

  /**
   * Why a request riding a session is refused before its role is looked at (null: it may go on):
   * it must say `X-Grid-Console: 1`, and its Host, and its Origin when sent, must name this member
   * (an IP address, localhost, or one of its host names: never a name an attacker's DNS controls).
   */
  requestRefusal(consoleHeader: string | undefined, hostHeader: string | undefined, origin: string | undefined): string | null {
    if (consoleHeader?.trim() !== '1') return 'a console session is used only by requests with X-Grid-Console: 1';
    if (hostHeader === undefined || !this.namesThisMember(hostHeader)) return 'the Host of a console request must name this member';
    if (origin !== undefined) {
      const m = /^https?:\/\/(.+)$/i.exec(origin.trim());
      if (m === null || (m[1] as string).toLowerCase() !== hostHeader.trim().toLowerCase()) return 'the Origin of a console request must be the member itself';
    }
    return null;
  }

  private namesThisMember(hostHeader: string): boolean {
    const h = hostHeader.trim().toLowerCase();
    const host = h.startsWith('[') ? h.slice(1, h.indexOf(']')) : (h.split(':')[0] ?? '');
    if (host === 'localhost' || /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || (h.startsWith('[') && host.includes(':'))) return true;
    return this.host.hostNames.some((n) => n.toLowerCase() === host);
  }
}

/** The session token in a Cookie header, or null. */
export function sessionToken(cookieHeader: string | undefined): string | null {
  if (cookieHeader === undefined) return null;
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === SESSION_COOKIE) {
      const v = part.slice(eq + 1).trim();
      return /^[A-Za-z0-9_-]{16,128}$/.test(v) ? v : null;
    }
  }
  return null;
}

const NEEDS: Readonly<Record<ConsoleRole, number>> = { 'read-only': 0, operator: 1, admin: 2 };

/** The least role a call needs (spec/console.md: read-only changes nothing; operator state, WAN, log level, data; admin the rest). */
export function roleNeeded(group: EndpointGroup | null, method: string, segments: readonly string[]): ConsoleRole {
  const m = method === 'HEAD' ? 'GET' : method;
  if (segments[1] === 'console') return 'read-only';
  if (group === 'HEALTH_CHECK' || group === 'CLUSTER_READ') return 'read-only';
  if (group === 'DATA') {
    // A GET of a queue with a timeout polls (takes an item): a change.
    const poll = segments[2] === 'queues' && segments.length >= 5 && (segments[4] ?? '').toLowerCase() !== 'size';
    return m === 'GET' && !poll ? 'read-only' : 'operator';
  }
  if (m === 'GET') return 'read-only';
  if (group === 'WAN') return 'operator';
  if (group === 'CLUSTER_WRITE') {
    const last = segments[segments.length - 1];
    if (last === 'changeState' || segments[2] === 'log-level') return 'operator';
  }
  return 'admin';
}

/** Why the role may not make this call (a 403's message), or null. */
export function roleRefusal(role: ConsoleRole, group: EndpointGroup | null, method: string, segments: readonly string[]): string | null {
  const needed = roleNeeded(group, method, segments);
  if (NEEDS[role] >= NEEDS[needed]) return null;
  return `the ${role} role may not ${method} /${segments.join('/')}: it needs ${needed}`;
}

function trim<K, V>(map: Map<K, V>, max: number): void {
  while (map.size > max) {
    const first = map.keys().next();
    if (first.done === true) return;
    map.delete(first.value);
  }
}
