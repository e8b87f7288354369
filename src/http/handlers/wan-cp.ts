// WAN (rest.md §8) and CP subsystem (rest.md §9) calls. This version replicates no maps over a WAN
// and runs no CP subsystem: the member refuses a configuration that asks for WAN replication, so
// every WAN call names a replication this member does not have (404), and every CP call answers 503.
// The parameter and credential checks still run first, in the documented order.
import { GridError } from '../../util/errors.js';
import type { MemberApi } from '../../member/member-api.js';
import { fail, type HttpReply } from '../reply.js';
import type { HttpRequest } from '../request.js';
import { requireHeaderCredentialsWhenSecure } from './info.js';
import { authenticated } from './management.js';

function unknownReplication(api: MemberApi, name: string): GridError {
  const known = api.wanReplicationNames();
  const hint = known.length === 0 ? 'no WAN replication is configured on this member' : `configured: ${known.join(', ')}`;
  return new GridError('ERR_WAN_UNKNOWN', `WAN replication '${name}' is not known (${hint})`);
}

/** A WAN POST with `extra` parameters after the credentials; the first is the replication name. */
export function wanAction(endpoint: string, extra: number) {
  return (req: HttpRequest, api: MemberApi): HttpReply => {
    const values = authenticated(req, api, extra, `wan/${endpoint}`);
    throw unknownReplication(api, values[0] ?? '');
  };
}

export function addWanConfig(req: HttpRequest, api: MemberApi): HttpReply {
  authenticated(req, api, 1, 'wan/addWanConfig');
  return fail(501, 'adding a WAN configuration is not supported by this version of the member');
}

export function wanProgress(req: HttpRequest): HttpReply {
  throw new GridError('ERR_WAN_UNKNOWN', `no WAN sync or consistency check has the id '${req.params.uuid ?? ''}'`);
}

/**
 * A CP call (rest.md §9). With security on, credentials first (rest.md §7 lists cp-subsystem
 * `groups`, `members` and `reset` among the calls that need them when security asks): a POST takes
 * them as every management POST does (body `p1&p2`, or `Authorization: Basic`), so a body without
 * them is 400 and wrong ones are 403; a GET has no body and needs `Authorization: Basic`, like
 * `GET log-level`. Every attempt is audited. With security off nothing is asked: rest.md §9 says
 * every CP call of a member without a CP subsystem answers 503, whatever its body.
 */
export function cpCall(req: HttpRequest, api: MemberApi): HttpReply {
  const endpoint = `cp-subsystem/${req.segments.slice(3).join('/')}`;
  if (api.securityEnabled()) {
    if (req.method === 'POST') authenticated(req, api, 0, endpoint);
    else requireHeaderCredentialsWhenSecure(req, api, endpoint);
  }
  const count = api.cpMemberCount();
  if (count === 0) throw new GridError('ERR_CP_DISABLED', 'CP subsystem is not enabled');
  throw new GridError('ERR_CP_DISABLED', `CP subsystem is not available: it needs ${count} CP members and this version runs no CP subsystem`);
}
