// The page's only way out: fetch() to the member that served it (CSP connect-src 'self'). Every call
// carries `X-Grid-Console: 1`, which the member asks of requests that ride a console session
// (spec/console.md "Security"); management calls carry the credentials the session stands for, or,
// with security off, the cluster name (the contract's body `cluster&password&…`).

export interface Answer {
  readonly status: number;
  readonly text: string;
  readonly headers: Headers;
}

export class CallError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A call that takes longer than this is given up (the member bounds its own gathers at 2 s). */
const CALL_TIMEOUT_MS = 15_000;

export async function request(method: string, path: string, body?: string, contentType?: string): Promise<Answer> {
  const headers: Record<string, string> = { 'X-Grid-Console': '1' };
  if (body !== undefined) headers['Content-Type'] = contentType ?? 'application/x-www-form-urlencoded';
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), CALL_TIMEOUT_MS);
  try {
    const r = await fetch(path, { method, headers, credentials: 'same-origin', cache: 'no-store', signal: abort.signal, ...(body === undefined ? {} : { body }) });
    const a = { status: r.status, text: await r.text(), headers: r.headers };
    // A session that ended (expired, or the member restarted): back to the login form.
    if (session?.security === true && path !== '/grid/console/session' && (a.status === 401 || (a.status === 403 && a.text.includes('"unauthenticated"')))) loginNeeded?.();
    return a;
  } catch (e) {
    throw new CallError(0, abort.signal.aborted ? `no answer within ${CALL_TIMEOUT_MS / 1000} s` : `the member did not answer (${e instanceof Error ? e.message : String(e)})`);
  } finally {
    clearTimeout(timer);
  }
}

/** What an error answer says: the JSON message, the Grid-Error header, or the status. */
export function messageOf(a: Answer): string {
  try {
    const v = JSON.parse(a.text) as { message?: unknown };
    if (typeof v.message === 'string') return v.message;
  } catch {
    // not JSON
  }
  return a.headers.get('grid-error') ?? (a.text !== '' ? a.text.slice(0, 200) : `status ${a.status}`);
}

export async function getJson<T>(path: string): Promise<T> {
  const a = await request('GET', path);
  if (a.status !== 200) throw new CallError(a.status, messageOf(a));
  return JSON.parse(a.text) as T;
}

/** Who the page is: security on or off, the session's user and role. */
export interface Session {
  readonly security: boolean;
  readonly user: string | null;
  readonly role: 'admin' | 'operator' | 'read-only';
  readonly clusterName: string;
  /** The member the page talks to: its address and UUID. */
  readonly member: string;
  readonly memberUuid: string;
}

let session: Session | null = null;
let loginNeeded: (() => void) | null = null;

/** What to do when a call finds the session gone (the app shows the login form). */
export function onLoginNeeded(fn: () => void): void {
  loginNeeded = fn;
}

export function currentSession(): Session | null {
  return session;
}

export function setSession(s: Session | null): void {
  session = s;
}

/**
 * The body of a management call (`p1&p2&…` percent-encoded): with security off the cluster name and
 * an empty password come first; with a session the member takes the credentials from it.
 */
export function managementBody(params: readonly string[]): string {
  const all = session !== null && !session.security ? [session.clusterName, '', ...params] : [...params];
  return all.map((p) => encodeURIComponent(p)).join('&');
}

/** The same call as a shell command: curl with the credentials spelled as placeholders. */
export function curlFor(method: string, path: string, params: readonly string[] | null, body?: { readonly text: string; readonly contentType: string }): string {
  const url = `${location.protocol}//${location.host}${path}`;
  const q = (t: string): string => `'${t.replace(/'/g, `'\\''`)}'`;
  const parts = ['curl', '-sS'];
  if (method !== 'GET') parts.push('-X', method);
  if (params !== null) {
    const security = session?.security ?? false;
    const creds = security ? [] : [session?.clusterName ?? 'dev', ''];
    if (security) parts.push('-u', q(`${session?.user ?? 'USER'}:PASSWORD`));
    parts.push('--data', q([...creds, ...params].map((p) => encodeURIComponent(p)).join('&')));
  } else if (body !== undefined) {
    parts.push('-H', q(`Content-Type: ${body.contentType}`), '--data-binary', q(body.text));
  } else if (session?.security === true) {
    parts.push('-u', q(`${session.user ?? 'USER'}:PASSWORD`));
  }
  parts.push(q(url));
  return parts.join(' ');
}

/** The grid-admin command for an action (null when grid-admin has none). */
export function adminFor(args: readonly string[] | null): string | null {
  if (args === null) return null;
  const creds = session?.security === true ? ['--user', session.user ?? 'USER', '--password-file', 'FILE'] : ['--cluster-name', session?.clusterName ?? 'dev'];
  return ['grid-admin', '--address', location.host, ...creds, ...args].join(' ');
}
