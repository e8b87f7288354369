// WAN calls (rest.md §8; CP calls are in cp.ts). WAN calls run the documented checks in
// order (parameter count, credentials, then the action) and act through MemberApi.wan(): pause,
// resume, stop and clear act on this member only; syncs, consistency checks and addWanConfig are
// cluster-wide (wan.md).
import { GridError } from '../../util/errors.js';
import type { MemberApi } from '../../member/member-api.js';
import { json, type HttpReply } from '../reply.js';
import type { HttpRequest } from '../request.js';
import { authenticated } from './management.js';

const ANSWERS: Readonly<Record<string, string>> = {
  clearWanQueues: 'WAN replication queues are cleared.',
  pausePublisher: 'WAN publisher paused',
  resumePublisher: 'WAN publisher resumed',
  stopPublisher: 'WAN publisher stopped',
};

/** A WAN POST with `extra` parameters after the credentials: replication, publisher id (, map name). */
export function wanAction(endpoint: string, extra: number) {
  return (req: HttpRequest, api: MemberApi): HttpReply => {
    const values = authenticated(req, api, extra, `wan/${endpoint}`);
    const replication = values[0] ?? '';
    const publisherId = values[1] ?? '';
    const wan = api.wan();
    switch (endpoint) {
      case 'clearWanQueues':
        wan.clearQueues(replication, publisherId);
        break;
      case 'pausePublisher':
        wan.pause(replication, publisherId);
        break;
      case 'resumePublisher':
        wan.resume(replication, publisherId);
        break;
      case 'stopPublisher':
        wan.stop(replication, publisherId);
        break;
      case 'sync/map':
      case 'sync/allmaps': {
        const map = endpoint === 'sync/map' ? requireMapName(values[2]) : null;
        const uuid = wan.sync(replication, publisherId, map);
        return json(200, { status: 'success', message: 'Sync initiated', uuid });
      }
      case 'consistencyCheck/map': {
        const uuid = wan.consistencyCheck(replication, publisherId, requireMapName(values[2]));
        return json(200, { status: 'success', message: 'Consistency check initiated', uuid });
      }
      default:
        throw new GridError('ERR_HTTP_BAD_REQUEST', `unknown WAN call ${endpoint}`);
    }
    return json(200, { status: 'success', message: ANSWERS[endpoint] ?? '' });
  };
}

function requireMapName(name: string | undefined): string {
  if (name === undefined || name === '') throw new GridError('ERR_HTTP_BAD_REQUEST', 'mapName: the map name (fifth parameter) is empty');
  return name;
}

export async function addWanConfig(req: HttpRequest, api: MemberApi): Promise<HttpReply> {
  const values = authenticated(req, api, 1, 'wan/addWanConfig');
  const r = await api.wan().addConfig(values[0] ?? '');
  return json(200, { status: 'success', message: 'WAN configuration added.', addedPublisherIds: r.addedPublisherIds, ignoredPublisherIds: r.ignoredPublisherIds });
}

export function wanProgress(req: HttpRequest, api: MemberApi): HttpReply {
  const uuid = req.params.uuid ?? '';
  const p = api.wan().progress(uuid);
  if (p === null) throw new GridError('ERR_WAN_UNKNOWN', `no WAN sync or consistency check has the id '${uuid}' on this member (records are kept at least 1 h after they end)`);
  return json(200, { status: 'success', result: p });
}

export function wanCheckResult(req: HttpRequest, api: MemberApi): HttpReply {
  const uuid = req.params.uuid ?? '';
  const r = api.wan().checkResult(uuid);
  if (r === null) throw new GridError('ERR_WAN_UNKNOWN', `no WAN consistency check has the id '${uuid}' on this member (records are kept at least 1 h after they end)`);
  return json(200, { status: 'success', result: r });
}
