// Rules that span several values, checked once every source (defaults, file, environment, flags) has
// been applied, so an override cannot slip past them. Each rule has its own message, which starts
// with where the value came from (recorded in `origins`). Problems that should not stop the member
// (an empty password, settings that have no effect) come back as warnings; facts about how a valid
// setting will be run that an operator may not expect come back as notices (logged at INFO).
import { ConfigError } from './config-error.js';
import { originKey, type Draft, type Origins } from './draft.js';
import { chooseAddress, type LocalInterface } from './bind-address.js';
import { findPatternTies } from './match.js';
import { envSegment } from './env.js';
import { joinPath } from './paths.js';
import { WAN_PUBLISHERS_PER_SCHEME_MAX, WAN_SCHEMES_MAX } from './wan-values.js';

export interface ValidateInput {
  readonly cwd: string;
  /** True when the file at this absolute path can be read. */
  readonly fileReadable: (path: string) => boolean;
  readonly supports: FeatureSupport;
  /** The machine's addresses, to refuse `<interfaces>` that match none; null skips that check. */
  readonly localInterfaces: readonly LocalInterface[] | null;
}

/** Which optional subsystems the running member can run. */
export interface FeatureSupport {
  readonly persistence: boolean;
  readonly wanReplication: boolean;
  readonly cpSubsystem: boolean;
  readonly tls: boolean;
}

export const ALL_FEATURES: FeatureSupport = { persistence: true, wanReplication: true, cpSubsystem: true, tls: true };

export interface Findings {
  /** Logged at WARNING: the member starts, but something is probably not what was meant. */
  readonly warnings: string[];
  /** Logged at INFO: how a valid setting will be run, where that may differ from what the reference does. */
  readonly notices: string[];
}

/** Throws ConfigError for the first broken rule; returns warnings and notices. */
export function validate(d: Draft, origins: Origins, input: ValidateInput): Findings {
  const warnings: string[] = [];
  const notices: string[] = [];
  const where = (key: string): string => origins.get(key) ?? 'configuration';
  checkBackups(d, where);
  checkTies(d, where);
  checkTiming(d, where);
  checkWanSchemes(d, where);
  checkWanRefs(d, where, notices);
  checkSecurity(d, where, warnings);
  checkSsl(d.network.ssl, where(originKey.networkSsl), '<network> <ssl>', input);
  if (d.advancedNetwork.restEndpoint !== null) {
    checkSsl(d.advancedNetwork.restEndpoint.ssl, where(originKey.restSsl), '<rest-server-socket-endpoint-config> <ssl>', input);
  }
  checkCp(d, where);
  checkAdvancedNetwork(d, where, warnings);
  checkInterfaces(d, where(originKey.interfaces), input.localInterfaces, warnings);
  checkPersistence(d, warnings);
  checkSupported(d, where, input.supports);
  if (d.advancedNetwork.enabled && d.advancedNetwork.restEndpoint === null && d.network.restApi.enabled) {
    warnings.push('REST is enabled under <network> (or by --rest), but <advanced-network> is on without a <rest-server-socket-endpoint-config>: REST is not served');
  }
  return { warnings, notices };
}

const NOT_IN_THIS_VERSION = 'is not supported by this version of the member';

function checkSupported(d: Draft, where: (key: string) => string, supports: FeatureSupport): void {
  if (!supports.persistence && d.persistence.enabled) {
    throw new ConfigError(where(originKey.persistence), `<persistence enabled="true">: persistence ${NOT_IN_THIS_VERSION}`);
  }
  const wan = d.wanReplications[0];
  if (!supports.wanReplication && wan !== undefined) {
    throw new ConfigError(where(originKey.wan(wan.name)), `<wan-replication name="${wan.name}">: WAN replication ${NOT_IN_THIS_VERSION}`);
  }
  if (!supports.cpSubsystem && d.cpSubsystem.cpMemberCount > 0) {
    throw new ConfigError(where(originKey.cp), `<cp-subsystem> <cp-member-count>${d.cpSubsystem.cpMemberCount}: the CP subsystem ${NOT_IN_THIS_VERSION}`);
  }
  if (!supports.tls && d.network.ssl.enabled) throw new ConfigError(where(originKey.networkSsl), `<network> <ssl enabled="true">: TLS ${NOT_IN_THIS_VERSION}`);
  if (!supports.tls && d.advancedNetwork.restEndpoint?.ssl.enabled === true) {
    throw new ConfigError(where(originKey.restSsl), `<rest-server-socket-endpoint-config> <ssl enabled="true">: TLS ${NOT_IN_THIS_VERSION}`);
  }
}

function checkBackups(d: Draft, where: (key: string) => string): void {
  for (const [kind, list, key] of [
    ['map', d.maps, originKey.map],
    ['queue', d.queues, originKey.queue],
  ] as const) {
    for (const c of list) {
      if (c.backupCount + c.asyncBackupCount > 6) {
        throw new ConfigError(
          where(key(c.name)),
          `<${kind} name="${c.name}">: backup-count + async-backup-count must be at most 6, got ${c.backupCount} + ${c.asyncBackupCount}`,
        );
      }
    }
  }
}

function checkTies(d: Draft, where: (key: string) => string): void {
  for (const [kind, names, key] of [
    ['map', d.maps.map((m) => m.name), originKey.map],
    ['queue', d.queues.map((q) => q.name), originKey.queue],
  ] as const) {
    const [tie] = findPatternTies(names);
    if (tie !== undefined) {
      const [a, b] = tie;
      throw new ConfigError(
        where(key(b)),
        `<${kind}> patterns "${a}" and "${b}" tie: a name can match both with the same number of literal characters; make one more specific`,
      );
    }
  }
}

function checkTiming(d: Draft, where: (key: string) => string): void {
  const p = d.properties;
  if (p.heartbeatIntervalSeconds * 3 > p.maxNoHeartbeatSeconds) {
    const at = origins2(where, 'maxNoHeartbeatSeconds', 'heartbeatIntervalSeconds');
    throw new ConfigError(
      at,
      `grid.max.no.heartbeat.seconds (${p.maxNoHeartbeatSeconds}) must be at least 3 x grid.heartbeat.interval.seconds (${p.heartbeatIntervalSeconds})`,
    );
  }
  if (p.operationCallTimeoutMs <= p.heartbeatIntervalSeconds * 1000) {
    const at = origins2(where, 'operationCallTimeoutMs', 'heartbeatIntervalSeconds');
    throw new ConfigError(
      at,
      `grid.operation.call.timeout.millis (${p.operationCallTimeoutMs}) must be greater than grid.heartbeat.interval.seconds in milliseconds (${p.heartbeatIntervalSeconds * 1000})`,
    );
  }
}

/** The origin of the first of two properties that was set explicitly. */
function origins2(where: (key: string) => string, a: string, b: string): string {
  const first = where(originKey.property(a));
  return first !== 'configuration' ? first : where(originKey.property(b));
}

/**
 * The file checks each publisher where it is written; these are the rules an environment variable
 * can break afterwards: a scheme or publisher that only the environment declares (no endpoints
 * yet), and the counts.
 */
function checkWanSchemes(d: Draft, where: (key: string) => string): void {
  if (d.wanReplications.length > WAN_SCHEMES_MAX) {
    const last = d.wanReplications[d.wanReplications.length - 1];
    throw new ConfigError(where(originKey.wan(last?.name ?? '')), `at most ${WAN_SCHEMES_MAX} <wan-replication> schemes are allowed, got ${d.wanReplications.length}`);
  }
  for (const w of d.wanReplications) {
    if (w.publishers.length > WAN_PUBLISHERS_PER_SCHEME_MAX) {
      throw new ConfigError(
        where(originKey.wan(w.name)),
        `<wan-replication name="${w.name}">: at most ${WAN_PUBLISHERS_PER_SCHEME_MAX} <batch-publisher>s are allowed in one scheme, got ${w.publishers.length}`,
      );
    }
    for (const p of w.publishers) {
      if (p.targetEndpoints.length === 0) {
        throw new ConfigError(
          where(originKey.wanPublisher(w.name, p.publisherId)),
          `<wan-replication name="${w.name}"> publisher ${p.publisherId} has no target endpoints (set <target-endpoints>, or GRID_WANREPLICATION_${envSegment(w.name)}_BATCHPUBLISHER_${envSegment(p.publisherId)}_TARGETENDPOINTS)`,
        );
      }
    }
  }
}

/**
 * Every `wan-replication-ref` names a scheme. A map whose scheme has a MERKLE_TREES publisher
 * while the map's `merkle-tree` is off is valid: Grid builds a map's Merkle trees when a
 * consistency check or a delta sync first needs them (the reference 5.0 refuses an explicit
 * `enabled="false"`, newer versions turn trees on when needed). That earns a notice, not a warning,
 * because nothing is wrong; it says what happens and how to have the trees kept up to date instead.
 */
function checkWanRefs(d: Draft, where: (key: string) => string, notices: string[]): void {
  const schemes = new Map(d.wanReplications.map((w) => [w.name, w]));
  for (const m of d.maps) {
    const ref = m.wanReplicationRef;
    if (ref === null) continue;
    if (ref.name === '') {
      const seg = envSegment(m.name);
      throw new ConfigError(
        where(originKey.wanRef(m.name)),
        `<map name="${m.name}"> <wan-replication-ref>: no scheme named; set GRID_MAP_${seg}_WANREPLICATIONREF_NAME (or give the map a <wan-replication-ref name="..."> in the file)`,
      );
    }
    const scheme = schemes.get(ref.name);
    if (scheme === undefined) {
      const known = schemes.size === 0 ? 'no <wan-replication> is configured' : `configured: ${[...schemes.keys()].join(', ')}`;
      throw new ConfigError(where(originKey.wanRef(m.name)), `<map name="${m.name}"> <wan-replication-ref name="${ref.name}">: no <wan-replication> has this name (${known})`);
    }
    const merkle = scheme.publishers.filter((p) => p.consistencyCheckStrategy === 'MERKLE_TREES').map((p) => p.publisherId);
    if (merkle.length > 0 && !m.merkleTree.enabled) {
      notices.push(
        `map ${m.name}: publisher ${merkle.join(', ')} of <wan-replication name="${ref.name}"> checks consistency with Merkle trees, and <merkle-tree enabled="false">: ` +
          `the map's trees (depth ${m.merkleTree.depth}) are built when a consistency check or delta sync first needs them, by a scan of each partition; ` +
          'set <merkle-tree enabled="true"> to keep them up to date on every write instead',
      );
    }
  }
}

function checkSecurity(d: Draft, where: (key: string) => string, warnings: string[]): void {
  const s = d.security;
  for (const realm of s.realms) {
    for (const u of realm.users) if (u.password === '') warnings.push(`realm ${realm.name}: user ${u.username} has an empty password`);
    if (realm.identity !== null && realm.identity.password === '') {
      warnings.push(`realm ${realm.name}: identity ${realm.identity.username} has an empty password`);
    }
  }
  if (!s.enabled) return;
  const at = where(originKey.security);
  if (s.memberAuthenticationRealm === null) throw new ConfigError(at, '<security enabled="true"> needs <member-authentication realm="..."/>');
  const realm = s.realms.find((r) => r.name === s.memberAuthenticationRealm);
  const authAt = where(originKey.memberAuthentication);
  if (realm === undefined) {
    throw new ConfigError(authAt, `<member-authentication realm="${s.memberAuthenticationRealm}">: no <realm> has this name`);
  }
  if (realm.identity === null) {
    throw new ConfigError(authAt, `<member-authentication realm="${realm.name}">: the realm needs an <identity><username-password .../></identity>`);
  }
}

function checkSsl(
  ssl: { enabled: boolean; keyFile: string; certFile: string; caFile: string; clientAuth: string },
  at: string,
  label: string,
  input: ValidateInput,
): void {
  if (!ssl.enabled) return;
  const files: [string, string][] = [
    ['key-file', ssl.keyFile],
    ['cert-file', ssl.certFile],
  ];
  // Checking client certificates needs the CA that signed them.
  if (ssl.clientAuth !== 'none') files.push(['ca-file', ssl.caFile]);
  for (const [attr, file] of files) {
    if (file === '') throw new ConfigError(at, `${label} enabled needs ${attr}`);
    const full = joinPath(input.cwd, file);
    if (!input.fileReadable(full)) throw new ConfigError(at, `${label} ${attr}: cannot read ${JSON.stringify(full)}`);
  }
}

/** The group size when none is given: cp-member-count, minus 1 if even, at most 7 (3 while CP is off). */
export function defaultGroupSize(cpMemberCount: number): number {
  if (cpMemberCount < 3) return 3;
  return Math.min(7, cpMemberCount % 2 === 0 ? cpMemberCount - 1 : cpMemberCount);
}

function checkCp(d: Draft, where: (key: string) => string): void {
  const cp = d.cpSubsystem;
  const at = where(originKey.cp);
  if (cp.groupSize === 0) cp.groupSize = defaultGroupSize(cp.cpMemberCount);
  if (cp.cpMemberCount > 0 && cp.groupSize > cp.cpMemberCount) {
    throw new ConfigError(at, `<cp-subsystem>: group-size (${cp.groupSize}) must not exceed cp-member-count (${cp.cpMemberCount})`);
  }
  if (cp.sessionTimeToLiveSeconds <= cp.sessionHeartbeatIntervalSeconds) {
    throw new ConfigError(at, `<cp-subsystem>: session-time-to-live-seconds (${cp.sessionTimeToLiveSeconds}) must be greater than session-heartbeat-interval-seconds (${cp.sessionHeartbeatIntervalSeconds})`);
  }
  if (cp.sessionTimeToLiveSeconds > cp.missingCpMemberAutoRemovalSeconds) {
    throw new ConfigError(at, `<cp-subsystem>: session-time-to-live-seconds (${cp.sessionTimeToLiveSeconds}) must not exceed missing-cp-member-auto-removal-seconds (${cp.missingCpMemberAutoRemovalSeconds})`);
  }
  const r = cp.raftAlgorithm;
  if (r.leaderHeartbeatPeriodInMillis >= r.leaderElectionTimeoutInMillis * r.maxMissedLeaderHeartbeatCount) {
    throw new ConfigError(
      at,
      `<cp-subsystem> <raft-algorithm>: leader-heartbeat-period-in-millis (${r.leaderHeartbeatPeriodInMillis}) must be less than leader-election-timeout-in-millis × max-missed-leader-heartbeat-count (${r.leaderElectionTimeoutInMillis * r.maxMissedLeaderHeartbeatCount})`,
    );
  }
}

function checkAdvancedNetwork(d: Draft, where: (key: string) => string, warnings: string[]): void {
  const a = d.advancedNetwork;
  const declared = a.memberEndpoint !== null || a.restEndpoint !== null || a.wanEndpoints.length > 0;
  if (a.enabled && a.memberEndpoint === null) {
    throw new ConfigError(where(originKey.advancedNetwork), '<advanced-network enabled="true"> needs <member-server-socket-endpoint-config>');
  }
  if (!a.enabled && declared) warnings.push('<advanced-network> declares endpoints but is not enabled: they are ignored');
}

/**
 * `<interfaces enabled="true">` needs a pattern, and (when the machine's addresses are known) a
 * pattern that matches one of them: otherwise the member would bind or advertise an address it
 * does not have. Patterns themselves were checked where they were read.
 */
function checkInterfaces(d: Draft, at: string, locals: readonly LocalInterface[] | null, warnings: string[]): void {
  const i = d.network.interfaces;
  if (!i.enabled) {
    if (i.interfaces.length > 0) warnings.push('<interfaces> lists patterns but is not enabled: they are ignored');
    return;
  }
  if (i.interfaces.length === 0) throw new ConfigError(at, '<interfaces enabled="true"> lists no <interface>');
  if (locals === null) return;
  const result = chooseAddress(d, locals);
  if (!result.ok) throw new ConfigError(at, `<interfaces enabled="true">: ${result.problem}`);
}

function checkPersistence(d: Draft, warnings: string[]): void {
  if (d.persistence.enabled) return;
  const names = [...d.maps.filter((m) => m.dataPersistence.enabled).map((m) => `map ${m.name}`), ...d.queues.filter((q) => q.dataPersistence.enabled).map((q) => `queue ${q.name}`)];
  if (names.length > 0) warnings.push(`data-persistence is enabled for ${names.join(', ')} but <persistence> is not enabled: nothing is persisted`);
}
