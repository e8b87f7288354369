// Wires the console's access rules (src/console/access.ts) to this member: its realm's users and
// their roles, its credential check and audit log, its timeline, its names.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { ConsoleAccess } from '../console/access.js';
import type { Config } from '../config/types.js';
import type { ComponentLogger } from '../util/logger.js';
import type { EventKind, EventDetails } from '../util/timeline.js';
import type { Credentials } from './member-api.js';

export interface ConsoleMember {
  readonly uuid: string;
  /** `host:port` once the member listens. */
  address(): string;
  authenticate(credentials: Credentials, endpoint: string, remoteAddress: string): boolean;
  recordEvent(kind: EventKind, message: string, details?: EventDetails): void;
}

export function consoleAccessOf(config: Config, member: ConsoleMember, audit: ComponentLogger): ConsoleAccess {
  const realm = config.security.realms.find((r) => r.name === config.security.memberAuthenticationRealm);
  const publicHost = config.network.publicAddress?.replace(/:\d+$/, '').replace(/^\[|\]$/g, '') ?? null;
  return new ConsoleAccess({
    enabled: config.network.restApi.console.enabled,
    security: config.security.enabled,
    tls: config.advancedNetwork.enabled ? (config.advancedNetwork.restEndpoint?.ssl.enabled ?? false) : config.network.ssl.enabled,
    clusterName: config.clusterName,
    memberAddress: () => member.address(),
    memberUuid: member.uuid,
    hostNames: [os.hostname(), ...(publicHost === null ? [] : [publicHost])],
    users: (realm?.users ?? []).map((u) => ({ username: u.username, role: u.role })),
    accepts: (username, password, remoteAddress) => member.authenticate({ user: username, password }, 'POST /grid/console/session', remoteAddress),
    nowMs: () => Date.now(),
    randomToken: () => randomBytes(32).toString('base64url'),
    record: (kind, message, actor) => member.recordEvent(kind, message, { actor }),
    audit: (message, fields) => audit.info(message, fields),
  });
}
