// Who may call the member's REST API (rest.md "Security"): with security off, the cluster name is
// the password-less user; with security on, a user of the member-authentication realm with its
// password. Every user is compared, and each comparison takes the same time whatever matched.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Config } from '../config/types.js';
import type { Credentials } from './member-api.js';

/** Whether the credentials are accepted under the configuration's security. */
export function credentialsAccepted(config: Config, credentials: Credentials): boolean {
  const security = config.security;
  if (!security.enabled) return credentials.user === config.clusterName;
  if (credentials.session === true) return true;
  const realm = security.realms.find((r) => r.name === security.memberAuthenticationRealm);
  if (realm === undefined) return false;
  let ok = false;
  // Compare every user so the time taken does not depend on which user name matched.
  for (const user of realm.users) {
    const match = constantTimeEqual(user.username, credentials.user) && constantTimeEqual(user.password, credentials.password);
    ok = ok || match;
  }
  return ok;
}

function constantTimeEqual(a: string, b: string): boolean {
  // Hash both sides so the comparison length never depends on the secret's length.
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb);
}
