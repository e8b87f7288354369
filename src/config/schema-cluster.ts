// `<persistence>`, `<security>` and `<cp-subsystem>`: parsed and checked here, stored in Config;
// whether this version of the member runs them is decided by the modules that would.
import { originKey, type DeepMutable, type Draft, type Origins } from './draft.js';
import { CLUSTER_DATA_RECOVERY_POLICIES, CONSOLE_ROLES, type ConsoleRole, type RealmConfig } from './types.js';
import type { ElementReader } from './xml-reader.js';
import { INT_MAX, parseBoolean, parseEnum, parseInteger, parseName, type Parsed } from './values.js';

export function parseCpMemberCount(raw: string): Parsed<number> {
  const n = parseInteger(raw, 0, INT_MAX);
  const expected = '0 (CP subsystem off) or an integer >= 3';
  return n.ok && n.value !== 1 && n.value !== 2 ? n : { ok: false, expected };
}

export function parseGroupSize(raw: string): Parsed<number> {
  const n = parseInteger(raw, 3, 7);
  return n.ok && n.value % 2 === 1 ? n : { ok: false, expected: '3, 5 or 7' };
}

export function readPersistence(grid: ElementReader, draft: Draft, origins: Origins): void {
  const el = grid.child('persistence', {
    attrs: ['enabled'],
    one: ['base-dir', 'backup-dir', 'validation-timeout-seconds', 'data-load-timeout-seconds', 'cluster-data-recovery-policy', 'auto-remove-stale-data'],
  });
  if (el === undefined) return;
  origins.set(originKey.persistence, el.where());
  const p = draft.persistence;
  p.enabled = el.typedAttr('enabled', parseBoolean, false);
  p.baseDir = el.leaf('base-dir', parseName, p.baseDir);
  const backup = el.child('backup-dir', { text: true });
  if (backup !== undefined) p.backupDir = backup.text();
  p.validationTimeoutSeconds = el.leaf('validation-timeout-seconds', (r) => parseInteger(r, 1, 86400), p.validationTimeoutSeconds);
  p.dataLoadTimeoutSeconds = el.leaf('data-load-timeout-seconds', (r) => parseInteger(r, 1, 86400), p.dataLoadTimeoutSeconds);
  p.clusterDataRecoveryPolicy = el.leaf('cluster-data-recovery-policy', (r) => parseEnum(r, CLUSTER_DATA_RECOVERY_POLICIES), p.clusterDataRecoveryPolicy);
  p.autoRemoveStaleData = el.leaf('auto-remove-stale-data', parseBoolean, p.autoRemoveStaleData);
}

export function readSecurity(grid: ElementReader, draft: Draft, origins: Origins): void {
  const el = grid.child('security', { attrs: ['enabled'], one: ['realms', 'member-authentication'] });
  if (el === undefined) return;
  const s = draft.security;
  origins.set(originKey.security, el.where());
  s.enabled = el.typedAttr('enabled', parseBoolean, false);
  const realms = el.child('realms', { many: ['realm'] });
  s.realms = [];
  for (const r of realms?.children('realm', { attrs: ['name'], one: ['authentication', 'identity'] }) ?? []) {
    const realm = readRealm(r);
    if (s.realms.some((o) => o.name === realm.name)) throw r.error(r.element, `<realm>: name ${realm.name} is given twice`);
    s.realms.push(realm);
  }
  const auth = el.child('member-authentication', { attrs: ['realm'] });
  if (auth !== undefined) {
    s.memberAuthenticationRealm = auth.requiredTypedAttr('realm', parseName);
    origins.set(originKey.memberAuthentication, auth.where());
  }
}

function readRealm(realm: ElementReader): DeepMutable<RealmConfig> {
  const name = realm.requiredTypedAttr('name', parseName);
  const users: { username: string; password: string; role: ConsoleRole }[] = [];
  const simple = realm.child('authentication', { one: ['simple'] })?.child('simple', { many: ['user'] });
  for (const user of simple?.children('user', { attrs: ['username', 'password', 'roles'] }) ?? []) {
    const username = user.requiredTypedAttr('username', parseName);
    if (users.some((u) => u.username === username)) throw user.error(user.element, `<user>: username ${username} is given twice in realm ${name}`);
    // Passwords are taken exactly as written (no trimming): spaces may be part of them.
    const roles = user.attr('roles')?.trim() ?? 'admin';
    if (!(CONSOLE_ROLES as readonly string[]).includes(roles)) throw user.error(user.element, `<user> ${username}: roles must be one of ${CONSOLE_ROLES.join(', ')}, not "${roles}"`);
    users.push({ username, password: user.attr('password') ?? '', role: roles as ConsoleRole });
  }
  const up = realm.child('identity', { one: ['username-password'] })?.child('username-password', { attrs: ['username', 'password'] });
  const identity = up === undefined ? null : { username: up.requiredTypedAttr('username', parseName), password: up.attr('password') ?? '' };
  return { name, users, identity };
}

const CP_LEAVES = [
  'cp-member-count',
  'group-size',
  'session-time-to-live-seconds',
  'session-heartbeat-interval-seconds',
  'missing-cp-member-auto-removal-seconds',
  'fail-on-indeterminate-operation-state',
  'persistence-enabled',
  'base-dir',
  'data-load-timeout-seconds',
  'raft-algorithm',
  'semaphores',
  'locks',
];

const RAFT_LEAVES = [
  'leader-election-timeout-in-millis',
  'leader-heartbeat-period-in-millis',
  'max-missed-leader-heartbeat-count',
  'append-request-max-entry-count',
  'commit-index-advance-count-to-snapshot',
  'uncommitted-entry-count-to-reject-new-appends',
  'append-request-backoff-timeout-in-millis',
];

export function parsePositiveInt(raw: string): Parsed<number> {
  return parseInteger(raw, 1, INT_MAX);
}

export function parseNonNegativeInt(raw: string): Parsed<number> {
  return parseInteger(raw, 0, INT_MAX);
}

function parseBaseDir(raw: string): Parsed<string> {
  const v = raw.trim();
  return v === '' ? { ok: false, expected: 'a directory path' } : { ok: true, value: v };
}

export function readCpSubsystem(grid: ElementReader, draft: Draft, origins: Origins): void {
  const el = grid.child('cp-subsystem', { one: CP_LEAVES });
  if (el === undefined) return;
  origins.set(originKey.cp, el.where());
  const cp = draft.cpSubsystem;
  cp.cpMemberCount = el.leaf('cp-member-count', parseCpMemberCount, cp.cpMemberCount);
  cp.groupSize = el.leaf('group-size', parseGroupSize, cp.groupSize);
  cp.sessionTimeToLiveSeconds = el.leaf('session-time-to-live-seconds', parsePositiveInt, cp.sessionTimeToLiveSeconds);
  cp.sessionHeartbeatIntervalSeconds = el.leaf('session-heartbeat-interval-seconds', parsePositiveInt, cp.sessionHeartbeatIntervalSeconds);
  cp.missingCpMemberAutoRemovalSeconds = el.leaf('missing-cp-member-auto-removal-seconds', parsePositiveInt, cp.missingCpMemberAutoRemovalSeconds);
  cp.failOnIndeterminateOperationState = el.leaf('fail-on-indeterminate-operation-state', parseBoolean, cp.failOnIndeterminateOperationState);
  cp.persistenceEnabled = el.leaf('persistence-enabled', parseBoolean, cp.persistenceEnabled);
  cp.baseDir = el.leaf('base-dir', parseBaseDir, cp.baseDir);
  cp.dataLoadTimeoutSeconds = el.leaf('data-load-timeout-seconds', parsePositiveInt, cp.dataLoadTimeoutSeconds);
  const raft = el.child('raft-algorithm', { one: RAFT_LEAVES });
  if (raft !== undefined) {
    const r = cp.raftAlgorithm;
    r.leaderElectionTimeoutInMillis = raft.leaf('leader-election-timeout-in-millis', parsePositiveInt, r.leaderElectionTimeoutInMillis);
    r.leaderHeartbeatPeriodInMillis = raft.leaf('leader-heartbeat-period-in-millis', parsePositiveInt, r.leaderHeartbeatPeriodInMillis);
    r.maxMissedLeaderHeartbeatCount = raft.leaf('max-missed-leader-heartbeat-count', parsePositiveInt, r.maxMissedLeaderHeartbeatCount);
    r.appendRequestMaxEntryCount = raft.leaf('append-request-max-entry-count', parsePositiveInt, r.appendRequestMaxEntryCount);
    r.commitIndexAdvanceCountToSnapshot = raft.leaf('commit-index-advance-count-to-snapshot', parsePositiveInt, r.commitIndexAdvanceCountToSnapshot);
    r.uncommittedEntryCountToRejectNewAppends = raft.leaf('uncommitted-entry-count-to-reject-new-appends', parsePositiveInt, r.uncommittedEntryCountToRejectNewAppends);
    r.appendRequestBackoffTimeoutInMillis = raft.leaf('append-request-backoff-timeout-in-millis', parsePositiveInt, r.appendRequestBackoffTimeoutInMillis);
  }
  const semaphores = el.child('semaphores', { many: ['semaphore'] });
  for (const s of semaphores?.children('semaphore', { attrs: ['name'], one: ['jdk-compatible', 'initial-permits'] }) ?? []) {
    const name = s.requiredTypedAttr('name', parseName);
    if (cp.semaphores.some((x) => x.name === name)) throw s.error(s.element, `<semaphore>: name ${name} is given twice`);
    cp.semaphores.push({ name, jdkCompatible: s.leaf('jdk-compatible', parseBoolean, false), initialPermits: s.leaf('initial-permits', parseNonNegativeInt, 0) });
  }
  const locks = el.child('locks', { many: ['fenced-lock'] });
  for (const l of locks?.children('fenced-lock', { attrs: ['name'], one: ['lock-acquire-limit'] }) ?? []) {
    const name = l.requiredTypedAttr('name', parseName);
    if (cp.locks.some((x) => x.name === name)) throw l.error(l.element, `<fenced-lock>: name ${name} is given twice`);
    cp.locks.push({ name, lockAcquireLimit: l.leaf('lock-acquire-limit', parseNonNegativeInt, 0) });
  }
}
