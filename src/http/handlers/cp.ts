// CP subsystem calls: the ten management calls (rest.md §9, spec/cp.md "REST: management") and the
// data structures (spec/cp.md "REST: data structures"). Each goes through MemberApi.cp() (cp-api.ts),
// which routes it to the CP group's leader from whichever member received it.
//
// Credentials: with security on, credentials come first (a POST as every management POST, a GET
// with `Authorization: Basic`), so a CP call without them is 400/403 even when CP is off. With
// security off, a CP call of a member without a CP subsystem answers 503 whatever its body; with CP
// on, a POST must carry this cluster's name (`cluster&password`, rest.md §7): wrong → 403, nothing
// changes. Failures carry `{"status":"fail","message":…}`.
import { GridError } from '../../util/errors.js';
import type { Actor, MemberApi } from '../../member/member-api.js';
import type { CpMember } from '../../cp/metadata.js';
import type { CpStructureKind } from '../../cp/rest-calls.js';
import { json, type HttpReply } from '../reply.js';
import type { HttpRequest } from '../request.js';
import { requireHeaderCredentialsWhenSecure } from './info.js';
import { authenticatedActor } from './management.js';

/** `host:port` → the reference's `[host]:port`. */
function bracketed(address: string): string {
  const i = address.lastIndexOf(':');
  return i < 0 ? address : `[${address.slice(0, i)}]:${address.slice(i + 1)}`;
}

function memberJson(m: CpMember): { uuid: string; address: string } {
  return { uuid: m.uuid, address: bracketed(m.address) };
}

function notFound(message: string): GridError {
  return new GridError('ERR_CP_NOT_FOUND', message);
}

/** Checks credentials as the header says; answers the actor for calls that change something. */
function admit(req: HttpRequest, api: MemberApi, endpoint: string): Actor {
  let by: Actor = { user: '', source: req.remoteAddress };
  if (api.securityEnabled()) {
    if (req.method === 'POST') by = authenticatedActor(req, api, 0, endpoint).by;
    else requireHeaderCredentialsWhenSecure(req, api, endpoint);
  }
  if (api.cpMemberCount() === 0) throw new GridError('ERR_CP_DISABLED', 'CP subsystem is not enabled');
  if (req.method === 'POST' && !api.securityEnabled()) by = authenticatedActor(req, api, 0, endpoint).by;
  return by;
}

export async function cpManagement(req: HttpRequest, api: MemberApi): Promise<HttpReply> {
  const s = req.segments.slice(3);
  const endpoint = `cp-subsystem/${s.join('/')}`;
  const by = admit(req, api, endpoint);
  const cp = api.cp();
  const p = req.params;
  if (req.method === 'GET') {
    if (s[0] === 'members') {
      if (s.length === 1) return json(200, (await cp.members()).map(memberJson));
      const local = cp.localMember();
      if (local === null) throw notFound('this member is not a CP member');
      return json(200, memberJson(local));
    }
    const name = p.group ?? '';
    if (s.length === 1) return json(200, (await cp.groups()).map((g) => ({ name: g.name, id: g.id, seed: g.seed })));
    if (s.length === 2) {
      const d = await cp.group(name);
      if (d === null) throw notFound(`no CP group has the name ${name}`);
      return json(200, {
        id: { name: d.group.name, id: d.group.id, seed: d.group.seed },
        status: d.group.status,
        members: d.members.map(memberJson),
        leader: d.leader === null ? null : memberJson(d.leader),
        term: d.term,
        commitIndex: d.commitIndex,
      });
    }
    const sessions = await cp.sessions(name);
    if (sessions === null) throw notFound(`no CP group has the name ${name}`);
    return json(
      200,
      sessions.map((x) => ({ id: x.id, creationTime: x.creationTime, expirationTime: x.expirationTime, version: x.version, endpoint: x.endpoint, endpointType: x.endpointType, endpointName: x.endpointName })),
    );
  }
  // POST
  if (s[0] === 'reset') {
    const seed = cp.reset();
    api.auditCp(`reset the CP subsystem (new seed ${seed})`, by);
    return json(200, { status: 'success', message: 'CP subsystem reset: every CP group starts again', seed });
  }
  if (s[0] === 'members' && s.length === 1) {
    const m = await cp.promote();
    api.auditCp(`promoted this member to CP member ${m.uuid}`, by);
    return json(200, { status: 'success', ...memberJson(m) });
  }
  if (s[0] === 'members') {
    const uuid = p.uuid ?? '';
    await cp.removeMember(uuid);
    api.auditCp(`removed CP member ${uuid}`, by);
    return json(200, { status: 'success', message: `CP member ${uuid} removed` });
  }
  const group = p.group ?? '';
  if (s.length === 3) {
    await cp.destroyGroup(group);
    api.auditCp(`force-destroyed CP group ${group}`, by);
    return json(200, { status: 'success', message: `CP group ${group} removed` });
  }
  const raw = p.session ?? '';
  if (!/^-?\d{1,16}$/.test(raw)) throw new GridError('ERR_CP_BAD_REQUEST', `not a session id: ${JSON.stringify(raw.slice(0, 40))}`);
  await cp.closeSession(group, Number(raw));
  api.auditCp(`closed CP session ${raw} of group ${group}`, by);
  return json(200, { status: 'success', message: `CP session ${raw} closed` });
}

const INVOCATION_RE = /^[0-9A-Za-z._:-]{1,128}$/;

/** A data-structure call under /grid/rest/cp/{structure}/{name}[/{op}[/{arg}]]. */
export async function cpData(req: HttpRequest, api: MemberApi): Promise<HttpReply> {
  if (api.cpMemberCount() === 0) throw new GridError('ERR_CP_DISABLED', 'CP subsystem is not enabled');
  const structure = req.segments[3] as CpStructureKind;
  const invocation = req.header('grid-invocation');
  if (invocation !== undefined && !INVOCATION_RE.test(invocation.trim())) {
    throw new GridError('ERR_CP_BAD_REQUEST', 'Grid-Invocation must be 1 to 128 characters of letters, digits, ".", "_", ":" and "-" (a UUID)');
  }
  const a = await api.cp().rest(
    {
      method: req.method === 'HEAD' ? 'GET' : (req.method as 'GET' | 'POST' | 'DELETE'),
      structure,
      name: req.params.name ?? '',
      op: req.params.op ?? null,
      arg: req.params.arg ?? null,
      body: req.body ?? Buffer.alloc(0),
      contentType: req.header('content-type') ?? null,
      ifMatch: req.header('if-match') ?? null,
      endpoint: req.remoteAddress,
    },
    invocation === undefined ? null : invocation.trim(),
    req.client,
  );
  const headers: Record<string, string> = {};
  if (a.etag !== null) headers.etag = a.etag;
  if (a.status === 412 || a.status >= 500) headers['cache-control'] = 'no-store';
  const body = a.body === null ? undefined : typeof a.body === 'string' ? a.body : Buffer.from(a.body);
  return { status: a.status, headers, ...(a.contentType === null ? {} : { contentType: a.contentType }), ...(body === undefined ? {} : { body }) };
}
