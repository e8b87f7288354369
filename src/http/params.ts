// Parameters of management and WAN calls: a body `p1&p2&...`, positional, each value percent-decoded
// once. p1/p2 are the credentials (cluster name and password when security is off, user and
// password when it is on); they may instead come in an `Authorization: Basic` header, and then the
// body holds only the remaining parameters. Checks run in the order rest.md §7 gives: parameter
// count (400), then credentials (403), then the action.
import { GridError } from '../util/errors.js';
import type { Credentials } from '../member/member-api.js';
import type { HttpRequest } from './request.js';

export interface ManagementParams {
  readonly credentials: Credentials;
  /** Parameters after the credentials, in order. */
  readonly values: readonly string[];
}

/**
 * Splits the body into at most `limit` parameters; extra `&` stay inside the last one, so a JSON
 * document or a member list can be the last parameter. An empty body is one empty parameter; no body
 * at all is none.
 */
export function splitParams(body: Buffer | null, limit: number, plusIsSpace: boolean): string[] {
  if (body === null) return [];
  const textBody = body.toString('utf8');
  const parts: string[] = [];
  let start = 0;
  while (parts.length < limit - 1) {
    const amp = textBody.indexOf('&', start);
    if (amp < 0) break;
    parts.push(textBody.slice(start, amp));
    start = amp + 1;
  }
  parts.push(textBody.slice(start));
  return parts.map((p) => decodeParam(p, plusIsSpace));
}

function decodeParam(raw: string, plusIsSpace: boolean): string {
  const withSpaces = plusIsSpace ? raw.replace(/\+/g, ' ') : raw;
  if (!withSpaces.includes('%')) return withSpaces;
  try {
    return decodeURIComponent(withSpaces);
  } catch {
    throw new GridError('ERR_HTTP_BAD_REQUEST', `malformed percent escape in parameter "${raw.slice(0, 40)}"`);
  }
}

function basicCredentials(header: string | undefined): Credentials | null {
  if (header === undefined) return null;
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (match === null) return null;
  const decoded = Buffer.from(match[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return { user: decoded, password: '' };
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

function isFormEncoded(req: HttpRequest): boolean {
  const type = req.header('content-type');
  return type !== undefined && type.toLowerCase().startsWith('application/x-www-form-urlencoded');
}

/**
 * Reads credentials plus `extra` further parameters. Throws ERR_AUTH_MISSING_PARAMETERS when too few
 * arrived. `extra` counts only the parameters after the credentials.
 */
export function readManagementParams(req: HttpRequest, extra: number): ManagementParams {
  const fromHeader = sessionCredentials(req) ?? basicCredentials(req.header('authorization'));
  const plus = isFormEncoded(req);
  if (fromHeader !== null) {
    const values = extra === 0 ? [] : splitParams(req.body, extra, plus);
    if (values.length < extra) throw missing(extra);
    return { credentials: fromHeader, values };
  }
  const all = splitParams(req.body, extra + 2, plus);
  if (all.length < extra + 2) throw missing(extra + 2);
  return { credentials: { user: all[0] as string, password: all[1] as string }, values: all.slice(2) };
}

/** Credentials of a GET endpoint that requires them when security is on: only the header can carry them. */
export function headerCredentials(req: HttpRequest): Credentials | null {
  return sessionCredentials(req) ?? basicCredentials(req.header('authorization'));
}

/** A console session the dispatcher admitted stands in for `Authorization: Basic`. */
function sessionCredentials(req: HttpRequest): Credentials | null {
  return req.console === undefined ? null : { user: req.console.username, password: '', session: true };
}

function missing(count: number): GridError {
  return new GridError('ERR_AUTH_MISSING_PARAMETERS', `This endpoint expects at least ${count} parameters`);
}
