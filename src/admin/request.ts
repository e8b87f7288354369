// Credentials and the HTTP request of one call (rest.md §7), without I/O. Credentials: security off,
// p1 is the cluster name and p2 is ignored by the member; security on, p1/p2 are a realm user and
// password. Sources, highest first: flags (--cluster-name, --user, --password, --password-file),
// then GRID_ADMIN_CLUSTER_NAME / GRID_ADMIN_USER / GRID_ADMIN_PASSWORD; the cluster name defaults to
// "dev". A user means security is on; a flag beats the environment (--cluster-name overrides
// GRID_ADMIN_USER, --user overrides GRID_ADMIN_CLUSTER_NAME). The body is
// `p1&p2&params`, each value percent-encoded with encodeURIComponent (so `&`, `+`, `%` and spaces
// in a name or password arrive as they are) and sent as application/x-www-form-urlencoded. GETs that
// need credentials with security on get them in `Authorization: Basic`, and only when a user is
// given. The password is never part of anything printed.
import { MEMBER_VERSION } from '../member/version.js';
import type { GlobalOptions } from './args.js';
import type { AdminCall } from './commands.js';
import { UsageError } from './outcome.js';

export const DEFAULT_CLUSTER_NAME = 'dev';

export type Credentials =
  | { readonly kind: 'cluster-name'; readonly clusterName: string; readonly password: string }
  | { readonly kind: 'user'; readonly user: string; readonly password: string };

/** The environment variables read, by name; anything else in the environment is ignored. */
export interface AdminEnv {
  readonly GRID_ADMIN_CLUSTER_NAME?: string | undefined;
  readonly GRID_ADMIN_USER?: string | undefined;
  readonly GRID_ADMIN_PASSWORD?: string | undefined;
}

/** The first line of a password file, without its line end. */
export function passwordFromFile(text: string): string {
  const newline = text.search(/\r?\n/);
  return newline < 0 ? text : text.slice(0, newline);
}

/**
 * Resolves the credentials. `passwordFileText` is the content of --password-file when one was
 * given (the entry point reads it). Throws UsageError for a user without any password.
 */
export function resolveCredentials(options: GlobalOptions, env: AdminEnv, passwordFileText: string | null): Credentials {
  const nonEmpty = (v: string | undefined): string | null => (v === undefined || v === '' ? null : v);
  const password = options.password ?? (passwordFileText === null ? null : passwordFromFile(passwordFileText)) ?? env.GRID_ADMIN_PASSWORD ?? null;
  const user = options.user ?? (options.clusterName === null ? nonEmpty(env.GRID_ADMIN_USER) : null);
  if (user !== null) {
    if (password === null) {
      throw new UsageError(`user '${user}' needs a password`, '--password-file FILE, or $GRID_ADMIN_PASSWORD (--password PASSWORD shows it in the process list)');
    }
    return { kind: 'user', user, password };
  }
  return { kind: 'cluster-name', clusterName: options.clusterName ?? nonEmpty(env.GRID_ADMIN_CLUSTER_NAME) ?? DEFAULT_CLUSTER_NAME, password: password ?? '' };
}

/** What a request will carry, described for messages (never the password). */
export function describeCredentials(c: Credentials): string {
  return c.kind === 'user' ? `user '${c.user}'` : `cluster name '${c.clusterName}'`;
}

export interface HttpRequestPlan {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  /** UTF-8 text of the body, or null for none. */
  readonly body: string | null;
}

/** `p1&p2&params`, each percent-encoded once. */
export function encodeParams(values: readonly string[]): string {
  return values.map((v) => encodeURIComponent(v)).join('&');
}

export function buildRequest(call: AdminCall, credentials: Credentials): HttpRequestPlan {
  const headers: Record<string, string> = {
    accept: 'application/json',
    'user-agent': `grid-admin/${MEMBER_VERSION}`,
    connection: 'close',
  };
  let body: string | null = null;
  if (call.auth === 'body') {
    const p1 = credentials.kind === 'user' ? credentials.user : credentials.clusterName;
    body = encodeParams([p1, credentials.password, ...call.params]);
    headers['content-type'] = 'application/x-www-form-urlencoded';
  } else if (call.auth === 'basic-with-user' && credentials.kind === 'user') {
    headers.authorization = `Basic ${Buffer.from(`${credentials.user}:${credentials.password}`, 'utf8').toString('base64')}`;
  }
  if (body !== null) headers['content-length'] = String(Buffer.byteLength(body, 'utf8'));
  return { method: call.method, path: call.path, headers, body };
}
