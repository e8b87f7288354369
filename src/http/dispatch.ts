// From a request line to a handler, without sockets: split and decode the target, classify its
// endpoint group, refuse what REST or the group does not allow (403), route it (404 / 405 + Allow),
// then run the handler and turn thrown errors into the answer rest.md §3.6 asks for. The runtime
// feeds requests in (targets in origin form: the parser reduces an absolute-form target to its path
// and query) and writes replies out.
import { GridError, isGridError } from '../util/errors.js';
import type { EndpointGroup } from '../config/types.js';
import type { MemberApi } from '../member/member-api.js';
import { roleRefusal, sessionToken } from '../console/access.js';
import { classifyGroup } from './groups.js';
import { targetSegments } from './path.js';
import { dataError, empty, jsonError, type HttpReply } from './reply.js';
import type { HttpRequest } from './request.js';
import type { RouteTable, Route } from './routes.js';

export type Prepared =
  | { readonly kind: 'reply'; readonly reply: HttpReply }
  | {
      readonly kind: 'route';
      readonly route: Route;
      readonly segments: string[];
      readonly params: Readonly<Record<string, string>>;
      readonly tail: readonly string[];
      readonly group: EndpointGroup | null;
    };

export interface DispatchLog {
  internalError(error: unknown, method: string, target: string): void;
}

export class Dispatcher {
  constructor(
    private readonly routes: RouteTable,
    private api: MemberApi,
    private readonly log: DispatchLog,
  ) {}

  /** The member that answers from now on (a member that started over as a new one). */
  setApi(api: MemberApi): void {
    this.api = api;
  }

  /** Everything that can be decided from the request line alone (before reading a body). */
  prepare(method: string, target: string): Prepared {
    // With REST off, only the health group may be served (grid.http.healthcheck.enabled), so that
    // probes work on a member whose REST API stays closed.
    if (!this.api.restEnabled() && !(this.api.healthCheckWithoutRest() && isHealthTarget(target))) {
      return { kind: 'reply', reply: { ...jsonError(new GridError('ERR_REST_DISABLED', 'REST API is not enabled on this member')), close: true } };
    }
    let segments: string[];
    try {
      segments = targetSegments(target);
    } catch (e) {
      if (isGridError(e)) return { kind: 'reply', reply: this.pathError(method, target, e) };
      throw e;
    }
    const group = classifyGroup(method, segments);
    if (group !== null && !this.api.groupEnabled(group)) {
      return { kind: 'reply', reply: jsonError(new GridError('ERR_REST_GROUP_DISABLED', `REST endpoint group ${group} is not enabled`)) };
    }
    const found = this.routes.find(method, segments);
    if (found.kind === 'not-found') return { kind: 'reply', reply: empty(404) };
    if (found.kind === 'method-not-allowed') return { kind: 'reply', reply: empty(405, { allow: found.allow.join(', ') }) };
    return { kind: 'route', route: found.handler, segments, params: found.params, tail: found.tail, group };
  }

  /** Runs a routed request: a reply now when the handler answers synchronously; never throws or rejects. */
  run(prepared: Extract<Prepared, { kind: 'route' }>, plain: HttpRequest): HttpReply | Promise<HttpReply> {
    let request = plain;
    // Console sessions exist only with security on; without it no request pays for the look-up.
    if (this.api.securityEnabled() && this.api.console.enabled) {
      const gated = this.consoleGate(prepared, plain);
      if (gated.kind === 'reply') return gated.reply;
      request = gated.request;
      if (gated.cookie !== null) {
        const cookie = gated.cookie;
        const out = this.run(prepared, request);
        // The handler's own cookie wins (a login or a logout on the session path sets one).
        const withCookie = (r: HttpReply): HttpReply => (r.headers?.['set-cookie'] !== undefined ? r : { ...r, headers: { ...r.headers, 'set-cookie': cookie } });
        return out instanceof Promise ? out.then(withCookie) : withCookie(out);
      }
    }
    const dataCall = prepared.route.dataCall;
    // Every change a console session makes goes on the timeline, its data writes too (a person's).
    const audited = isManagementCall(prepared.group, request.method) || (request.console !== undefined && request.method !== 'GET' && request.method !== 'HEAD');
    try {
      const out = prepared.route.handler(request, this.api);
      if (!(out instanceof Promise)) return audited ? this.audit(request, out) : out;
      const answered = out.catch((e: unknown) => this.errorReply(dataCall, e, request.method, request.segments.join('/')));
      return audited ? answered.then((r) => this.audit(request, r)) : answered;
    } catch (e) {
      const r = this.errorReply(dataCall, e, request.method, request.segments.join('/'));
      return audited ? this.audit(request, r) : r;
    }
  }

  /**
   * A request with a console session cookie (security on): the session stands in for credentials
   * when the request says X-Grid-Console: 1, its Host and Origin name this member, and the
   * session's role allows the call (403 otherwise, spec/console.md "Security"). An unknown or
   * expired session is ignored: the call goes on as if it had none. The console's own files need
   * no credentials: a browser loads them with the cookie and without the header (a reload), so
   * they pass untouched. A session is renewed only by a request it is admitted for. `cookie`:
   * renew the browser's.
   */
  private consoleGate(prepared: Extract<Prepared, { kind: 'route' }>, request: HttpRequest): { kind: 'reply'; reply: HttpReply } | { kind: 'request'; request: HttpRequest; cookie: string | null } {
    if (request.console !== undefined) return { kind: 'request', request, cookie: null };
    const s = request.segments;
    if (s[1] === 'console' && s[2] !== 'session' && (request.method === 'GET' || request.method === 'HEAD')) return { kind: 'request', request, cookie: null };
    const token = sessionToken(request.header('cookie'));
    const known = token === null ? null : this.api.console.peek(token);
    if (token === null || known === null) return { kind: 'request', request, cookie: null };
    const refusal = this.api.console.requestRefusal(request.header('x-grid-console'), request.header('host'), request.header('origin'));
    const denied = refusal ?? roleRefusal(known.role, prepared.group, request.method, request.segments);
    if (denied !== null) {
      if (refusal === null) this.api.recordEvent('management-call', `${request.method} /${s.join('/')}: 403 (role ${known.role})`, { actor: `'${known.username}' (console) from ${request.remoteAddress}` });
      return { kind: 'reply', reply: this.errorReply(prepared.route.dataCall, new GridError('ERR_AUTH_UNAUTHENTICATED', denied), request.method, s.join('/')) };
    }
    const found = this.api.console.lookup(token);
    if (found === null) return { kind: 'request', request, cookie: null };
    const console = { username: found.user.username, role: found.user.role, token };
    const wrapped: HttpRequest = {
      method: request.method,
      segments: request.segments,
      params: request.params,
      tail: request.tail,
      body: request.body,
      remoteAddress: request.remoteAddress,
      client: request.client,
      console,
      header: (name) => request.header(name),
      queryString: () => request.queryString?.() ?? null,
    };
    return { kind: 'request', request: wrapped, cookie: found.renewCookie ? this.api.console.cookie(token) : null };
  }

  /** A management call goes on the timeline with its answer's status and who made it. */
  private audit(request: HttpRequest, reply: HttpReply): HttpReply {
    const user = basicUser(request.header('authorization'));
    const who = request.console !== undefined ? `'${request.console.username}' (console) ` : user === null ? '' : `'${user}' `;
    const actor = `${who}from ${request.remoteAddress === '' ? 'an unknown address' : request.remoteAddress}`;
    this.api.recordEvent('management-call', `${request.method} /${request.segments.join('/')}: ${reply.status}`, { actor });
    return reply;
  }

  errorReply(dataCall: boolean, e: unknown, method: string, target: string): HttpReply {
    if (isGridError(e)) return dataCall ? dataError(e) : jsonError(e);
    this.log.internalError(e, method, target);
    const internal = new GridError('ERR_INTERNAL', 'internal error');
    return dataCall ? dataError(internal) : jsonError(internal);
  }

  /**
   * An error found before routing (a bad escape, broken framing): a data path still answers like a
   * data call (empty body, Grid-Error), every other path with JSON.
   */
  requestError(method: string, target: string, e: GridError): HttpReply {
    return this.errorReply(DATA_TARGET.test(target), e, method, target);
  }

  private pathError(method: string, target: string, e: GridError): HttpReply {
    return this.errorReply(DATA_TARGET.test(target), e, method, target);
  }
}

const DATA_TARGET = /^\/grid\/rest\/(maps|queues)\//;

/** Calls that change the cluster (every group but data, health and reads), as the timeline records them. */
function isManagementCall(group: EndpointGroup | null, method: string): boolean {
  if (method === 'GET' || method === 'HEAD') return false;
  return group === 'CLUSTER_WRITE' || group === 'PERSISTENCE' || group === 'WAN' || group === 'CP';
}

/** The user name of an `Authorization: Basic` header, or null. */
function basicUser(header: string | undefined): string | null {
  if (header === undefined || !/^basic /i.test(header)) return null;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon <= 0 ? null : decoded.slice(0, Math.min(colon, 128));
}

/** `/grid/health`, anything under it, with or without a query. */
function isHealthTarget(target: string): boolean {
  if (!target.startsWith('/grid/health')) return false;
  const next = target.charCodeAt(12);
  return Number.isNaN(next) || next === 0x2f || next === 0x3f;
}
