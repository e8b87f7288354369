// The CP calls as the member's interfaces make them (REST management and data calls, the client
// protocol): each becomes a routed call (cp-service.ts) and its outcome an answer or a GridError
// with the status spec/cp.md names. No HTTP here: the handlers render what this returns.
import { GridError } from '../util/errors.js';
import type { CpService, CpCallResult, CpCallFailure } from './cp-service.js';
import { DEFAULT_GROUP, METADATA, parseCpName } from './metadata.js';
import type { CpGroupInfo, CpMember, MetadataResult } from './metadata.js';
import type { CallPayload, CpQuery, QueryAnswer } from './call-wire.js';
import { etag, planCpRest, resolveIfMatch } from './rest-calls.js';
import type { CpRestAnswer, CpRestRequest } from './rest-calls.js';
import type { CpCommand, CpResult } from './structures.js';
import type { SessionInfo } from './sessions.js';

export interface CpApiHost {
  isMaster(): boolean;
  masterAddress(): string | null;
  isLite(): boolean;
}

export interface CpGroupDetail {
  readonly group: CpGroupInfo;
  readonly members: readonly CpMember[];
  readonly leader: CpMember | null;
  readonly term: number;
  readonly commitIndex: number;
}

export interface CpRestReply extends CpRestAnswer {
  /** The full ETag header value, or null. */
  readonly etag: string | null;
}

const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
/** A group's status is asked of its leader with this bound, so a group without a leader still lists. */
const STATUS_TIMEOUT_MS = 2000;

export class CpApi {
  constructor(
    private readonly svc: CpService,
    private readonly host: CpApiHost,
  ) {}

  get enabled(): boolean {
    return this.svc.enabled;
  }

  /** Routes one call; failures become GridErrors. */
  run(group: string, payload: CallPayload, invocation = '', o: { idempotent?: boolean; waitMs?: number; timeoutMs?: number } = {}): Promise<CpCallResult> {
    return new Promise((resolve, reject) => {
      const idempotent = o.idempotent ?? (payload.kind !== 'write' || safeToRepeat(payload.command));
      this.svc.call(group, payload, invocation, idempotent, (r) => (r.ok ? resolve(r.result) : reject(failureError(r.failure, group, this.svc))), o);
    });
  }

  private async read(group: string, query: CpQuery, timeoutMs?: number): Promise<QueryAnswer> {
    return (await this.run(group, { kind: 'read', query }, '', timeoutMs === undefined ? {} : { timeoutMs })).value as QueryAnswer;
  }

  private async meta(command: Extract<CpCommand, { kind: 'meta' }>['command']): Promise<MetadataResult> {
    const r = await this.run(METADATA, { kind: 'write', command: { kind: 'meta', command } }, '', { idempotent: true });
    const v = r.value as CpResult;
    if (v.type !== 'meta') throw new GridError('ERR_INTERNAL', `METADATA answered ${v.type}`);
    return v.result;
  }

  /** METADATA's state now (a linearizable read), adopted as this member's view. */
  async refresh(): Promise<void> {
    const r = await this.run(METADATA, { kind: 'read', query: { q: 'metadata' } });
    const a = r.value as QueryAnswer;
    if (a.type === 'metadata') this.svc.noteMetadata(a.snapshot, r.index);
  }

  /** The group of a data structure's name, created on first use (`name@group`). */
  async ensureGroup(group: string): Promise<CpGroupInfo> {
    const known = this.svc.groupInfo(group);
    if (known !== undefined) return known;
    if (!this.svc.discovered) throw failureError('discovery', group, this.svc);
    const r = await this.meta({ kind: 'createGroup', name: group });
    if (!r.ok) throw new GridError('ERR_CP_BAD_REQUEST', r.message);
    await this.refresh();
    const g = this.svc.groupInfo(group);
    if (g === undefined) throw new GridError('ERR_CP_UNAVAILABLE', `CP group ${group} was created but is not known here yet`, { retryAfterSeconds: 1 });
    return g;
  }

  // ── management (spec/cp.md "REST: management") ────────────────────────────────────────────────

  async groups(): Promise<CpGroupInfo[]> {
    this.requireDiscovered();
    await this.refresh();
    return this.svc.groups();
  }

  async group(name: string): Promise<CpGroupDetail | null> {
    this.requireDiscovered();
    await this.refresh();
    const g = this.svc.groupInfo(name);
    if (g === undefined) return null;
    const members = this.members0(g.members);
    let leader: CpMember | null = null;
    let term = 0;
    let commitIndex = 0;
    try {
      const s = await this.read(name, { q: 'status' }, STATUS_TIMEOUT_MS);
      if (s.type === 'status') {
        term = s.term;
        commitIndex = s.commit;
        leader = this.svc.cpMembers().find((m) => m.uuid === s.leader) ?? null;
      }
    } catch {
      // No leader answered: the group is listed without one.
    }
    return { group: g, members, leader, term, commitIndex };
  }

  async sessions(name: string): Promise<readonly SessionInfo[] | null> {
    this.requireDiscovered();
    await this.refresh();
    if (this.svc.groupInfo(name) === undefined) return null;
    const a = await this.read(name, { q: 'sessions' });
    return a.type === 'sessions' ? a.sessions : [];
  }

  async members(): Promise<readonly CpMember[]> {
    this.requireDiscovered();
    await this.refresh();
    return this.svc.cpMembers();
  }

  localMember(): CpMember | null {
    const me = this.svc.localCpUuid;
    if (me === null) return null;
    return this.svc.cpMembers().find((m) => m.uuid === me) ?? null;
  }

  /** POST members: this member becomes a CP member (200 also when it is one already). */
  async promote(): Promise<CpMember> {
    this.requireDiscovered();
    if (this.host.isLite()) throw new GridError('ERR_CP_BAD_REQUEST', 'a lite member cannot be a CP member');
    await this.refresh();
    const already = this.localMember();
    if (already !== null) return already;
    const m = this.svc.newCpMember();
    const r = await this.meta({ kind: 'addMember', member: m });
    if (!r.ok) throw new GridError('ERR_CP_BAD_REQUEST', r.message);
    this.svc.adoptCpUuid(m.uuid);
    await this.refresh();
    return m;
  }

  async removeMember(uuid: string): Promise<void> {
    if (!UUID_RE.test(uuid)) throw new GridError('ERR_CP_BAD_REQUEST', `not a UUID: ${JSON.stringify(uuid.slice(0, 64))}`);
    this.requireDiscovered();
    await this.refresh();
    const m = this.svc.cpMembers().find((x) => x.uuid.toLowerCase() === uuid.toLowerCase());
    if (m === undefined) throw new GridError('ERR_CP_BAD_REQUEST', `no CP member has the UUID ${uuid}`);
    if (this.svc.cpMemberPresent(m)) throw new GridError('ERR_CP_BAD_REQUEST', `CP member ${uuid} (${m.address}) is still in the cluster: only a member that left can be removed`);
    const r = await this.meta({ kind: 'removeMember', uuid: m.uuid });
    if (!r.ok) throw new GridError('ERR_CP_BAD_REQUEST', r.message);
    await this.refresh();
  }

  /** POST groups/{name}/remove: forgets a group (one that lost its majority) without its own Raft. */
  async destroyGroup(name: string): Promise<void> {
    this.requireDiscovered();
    if (name.toUpperCase() === METADATA) throw new GridError('ERR_CP_BAD_REQUEST', 'the METADATA group cannot be removed');
    await this.refresh();
    if (this.svc.groupInfo(name) === undefined) throw new GridError('ERR_CP_BAD_REQUEST', `no CP group has the name ${name}`);
    const r = await this.meta({ kind: 'destroyGroup', name });
    if (!r.ok) throw new GridError('ERR_CP_BAD_REQUEST', r.message);
    await this.refresh();
  }

  async closeSession(group: string, id: number): Promise<void> {
    this.requireDiscovered();
    await this.refresh();
    if (this.svc.groupInfo(group) === undefined) throw new GridError('ERR_CP_BAD_REQUEST', `no CP group has the name ${group}`);
    const r = (await this.run(group, { kind: 'write', command: { kind: 'session', op: 'close', id } })).value as CpResult;
    if (r.type === 'error') throw new GridError('ERR_CP_BAD_REQUEST', `no CP session ${id} in group ${group}`);
  }

  /** POST reset: on the master only. Answers the new seed. */
  reset(): number {
    if (!this.svc.enabled) throw failureError('disabled', METADATA, this.svc);
    if (!this.host.isMaster()) throw new GridError('ERR_CP_BAD_REQUEST', `only the master can reset the CP subsystem: ask ${this.host.masterAddress() ?? 'the master (none is known now)'}`);
    return this.svc.startReset();
  }

  private requireDiscovered(): void {
    if (!this.svc.enabled) throw failureError('disabled', METADATA, this.svc);
    if (!this.svc.discovered) throw failureError('discovery', METADATA, this.svc);
  }

  private members0(uuids: readonly string[]): CpMember[] {
    const all = this.svc.cpMembers();
    return uuids.map((u) => all.find((m) => m.uuid === u) ?? { uuid: u, address: '', memberUuid: '' });
  }

  // ── data structures over REST (spec/cp.md "REST: data structures") ────────────────────────────

  async rest(req: CpRestRequest, invocation: string | null, caller?: CallerLiveness): Promise<CpRestReply> {
    if (!this.svc.enabled) throw failureError('disabled', DEFAULT_GROUP, this.svc);
    const plan = planCpRest({ ...req, jdkCompatible: (name) => this.svc.semaphoreConfig(name).jdkCompatible });
    if (plan.kind === 'bad') throw new GridError(plan.status === 404 ? 'ERR_CP_NOT_FOUND' : 'ERR_CP_BAD_REQUEST', plan.message);
    if (!this.svc.discovered) throw failureError('discovery', plan.group, this.svc);
    const g = this.svc.groupInfo(plan.group) ?? (await this.ensureGroup(plan.group));
    const tag = (a: CpRestAnswer): CpRestReply => ({ ...a, etag: a.etagIndex === null ? null : etag(g.id, g.seed, a.etagIndex) });
    if (plan.kind === 'read') {
      const a = await this.read(plan.group, plan.query);
      return tag(plan.render(a));
    }
    const resolved = resolveIfMatch(plan, g.id, g.seed);
    if ('status' in resolved) return tag(resolved);
    const asked = resolved.waitMs ?? (resolved.command.kind === 'latch' && resolved.command.op === 'await' ? resolved.command.timeoutMs : 0);
    const waitMs = asked < 0 ? Infinity : asked;
    // A call that may wait, and that its caller cannot retry (it gave no Grid-Invocation), gets its
    // UUID here, so that its wait can be withdrawn if the caller goes away: a permit or lock granted
    // to nobody would be lost. A caller that named its call may come back with it, and re-attach.
    const withdrawable = waitMs > 0 && invocation === null && caller !== undefined;
    const id = invocation ?? (withdrawable ? this.svc.newUuid() : '');
    const call = this.run(plan.group, { kind: 'write', command: resolved.command }, id, { waitMs });
    if (withdrawable) this.withdrawWhenGone(plan.group, id, call, caller);
    const r = await call;
    return tag(resolved.render(r.value as CpResult, r.index));
  }

  /**
   * The caller of a waiting call went away (its HTTP connection closed): its wait is withdrawn
   * through the log (expireWaits). Whether the wait is there yet or its entry comes later, the
   * state machine answers the invocation then, so what it waited for is never granted to nobody.
   * Tried again (at most 3 times) when the withdrawal itself fails.
   */
  private withdrawWhenGone(group: string, id: string, call: Promise<unknown>, caller: CallerLiveness): void {
    let settled = false;
    const off = caller.onGone(() => {
      let tries = 0;
      const withdraw = (): void => {
        if (settled || tries++ >= 3) return;
        this.run(group, { kind: 'write', command: { kind: 'expireWaits', invocations: [id] } }, '', { idempotent: true }).catch(withdraw);
      };
      withdraw();
    });
    call.then(
      () => ((settled = true), off()),
      () => ((settled = true), off()),
    );
  }

  // ── the client protocol (reference/cp-subsystem.md §1) ─────────────────────────────────────────

  /** createCPGroup: the group of a proxy name (`object[@group]`), created on first use. */
  async groupOf(proxyName: string): Promise<CpGroupInfo> {
    if (!this.svc.enabled) throw failureError('disabled', DEFAULT_GROUP, this.svc);
    const { group } = CpApi.name(proxyName);
    if (!this.svc.discovered) throw failureError('discovery', group, this.svc);
    return this.ensureGroup(group);
  }

  /** A group a client names by (name, seed, id): still that group, or ERR_CP_GROUP_DESTROYED (client 89). */
  async groupById(name: string, seed: number, id: number): Promise<CpGroupInfo> {
    if (!this.svc.enabled) throw failureError('disabled', name, this.svc);
    if (!this.svc.discovered) throw failureError('discovery', name, this.svc);
    const same = (g: CpGroupInfo | undefined): boolean => g !== undefined && g.seed === seed && g.id === id;
    if (!same(this.svc.groupInfo(name))) await this.refresh();
    const g = this.svc.groupInfo(name);
    if (g === undefined || !same(g)) throw new GridError('ERR_CP_GROUP_DESTROYED', `CP group ${name} (seed ${seed}, id ${id}) does not exist: it was removed, or the CP subsystem was reset; get the proxy again`);
    return g;
  }

  /** The configuration of a semaphore by its object name: jdk-compatible (sessionless), initial permits. */
  semaphoreConfig(object: string): { readonly jdkCompatible: boolean; readonly initialPermits: number } {
    return this.svc.semaphoreConfig(object);
  }

  /** A write on a group; a state-machine error becomes the GridError it stands for. */
  async write(group: CpGroupInfo, command: CpCommand, invocation: string, waitMs = 0): Promise<CpResult> {
    const r = (await this.run(group.name, { kind: 'write', command }, invocation, { waitMs })).value as CpResult;
    if (r.type === 'error') throw stateError(r.code, r.message);
    return r;
  }

  async query(group: CpGroupInfo, query: CpQuery): Promise<QueryAnswer> {
    return this.read(group.name, query);
  }

  /** The object and group of a client's or caller's name; a bad name is ERR_CP_BAD_REQUEST. */
  static name(raw: string): { object: string; group: string } {
    const p = parseCpName(raw);
    if ('error' in p) throw new GridError('ERR_CP_BAD_REQUEST', p.error);
    return p;
  }
}

/**
 * Whether a write is safe to repeat in the reference's sense (spec/cp.md "Raft"): with
 * fail-on-indeterminate-operation-state these are still retried after an indeterminate outcome,
 * the others answer "indeterminate". (Every write is applied at most once either way.)
 */
function safeToRepeat(c: CpCommand): boolean {
  switch (c.kind) {
    case 'latch':
      return c.op !== 'trySetCount';
    case 'lock':
    case 'session':
    case 'expireWaits':
    case 'meta':
      return true;
    case 'semaphore':
      return c.op !== 'init' && c.op !== 'change';
    default:
      return false;
  }
}

function stateError(code: string, message: string): GridError {
  switch (code) {
    case 'illegal-argument':
      return new GridError('ERR_CP_BAD_REQUEST', message);
    case 'session-expired':
      return new GridError('ERR_CP_SESSION_EXPIRED', message);
    case 'not-owner':
      return new GridError('ERR_CP_CONFLICT', message);
    default:
      return new GridError('ERR_CP_ILLEGAL_STATE', message);
  }
}

export function failureError(f: CpCallFailure, group: string, svc: CpService): GridError {
  switch (f) {
    case 'disabled':
      return new GridError('ERR_CP_DISABLED', 'CP subsystem is not enabled');
    case 'discovery':
      return new GridError('ERR_CP_UNAVAILABLE', 'CP subsystem discovery in progress', { retryAfterSeconds: 1 });
    case 'no-group':
      return new GridError('ERR_CP_NOT_FOUND', `no CP group has the name ${group}`);
    case 'indeterminate':
      return new GridError('ERR_CP_INDETERMINATE', `indeterminate operation state: the leader of CP group ${group} went away after appending the call; it may or may not have taken effect (fail-on-indeterminate-operation-state is true)`);
    case 'timeout':
      return new GridError('ERR_CP_UNAVAILABLE', `CP group ${group} had no leader that answered within ${svc.callTimeoutMs} ms; try again`, { retryAfterSeconds: 1 });
  }
}

/** How a call learns that its caller went away (an HTTP connection: member-api.ts ClientLiveness). */
export interface CallerLiveness {
  onGone(callback: () => void): () => void;
}
