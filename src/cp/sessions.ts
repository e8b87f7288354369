// CP sessions of one group (spec/cp.md "Sessions"; the reference's §2.1): part of the group's state
// machine, so every replica holds the same sessions. Deterministic: times are the clock readings
// the leader put in the commands.
//
// - create: ids start at 1 and rise; expiry = creation + TTL. heartbeat: expiry = max(expiry,
//   now + TTL) and version + 1; an unknown session is gone (SESSION_EXPIRED, 85).
// - The leader proposes `expire` for sessions whose expiry passed, naming their versions: a
//   heartbeat that got in between (a new version) cancels it.
// - A new leader's first commit shifts every expiry by one heartbeat interval (a failover does
//   not expire sessions whose heartbeats went to the old leader).
// - Sessions that hold nothing and were created more than a TTL ago are closed (`closeInactive`).
// - Closing a session (close, expire, force-close) tells the structures to release what it holds;
//   the caller does that in the same entry (`closed` lists the ids).

export interface SessionInfo {
  readonly id: number;
  readonly creationTime: number;
  readonly expirationTime: number;
  readonly version: number;
  readonly endpoint: string;
  readonly endpointType: 'SERVER' | 'CLIENT';
  readonly endpointName: string;
}

export interface SessionTimes {
  readonly ttlMs: number;
  readonly heartbeatMs: number;
}

export class CpSessions {
  private readonly sessions = new Map<number, SessionInfo>();
  private nextId = 1;
  private nextThreadId = 1;

  constructor(private readonly times: SessionTimes) {}

  create(nowMs: number, endpoint: string, endpointType: 'SERVER' | 'CLIENT', endpointName: string): SessionInfo {
    const s: SessionInfo = { id: this.nextId++, creationTime: nowMs, expirationTime: nowMs + this.times.ttlMs, version: 0, endpoint, endpointType, endpointName };
    this.sessions.set(s.id, s);
    return s;
  }

  /** A heartbeat (explicit, or any session-bound call): false when the session is gone. */
  heartbeat(id: number, nowMs: number): boolean {
    const s = this.sessions.get(id);
    if (s === undefined) return false;
    this.sessions.set(id, { ...s, expirationTime: Math.max(s.expirationTime, nowMs + this.times.ttlMs), version: s.version + 1 });
    return true;
  }

  isActive(id: number): boolean {
    return this.sessions.has(id);
  }

  /** Closes a session; false when it was not open. */
  close(id: number): boolean {
    return this.sessions.delete(id);
  }

  /** Leader: sessions whose expiry passed, with the versions the expiry is decided on. */
  expired(nowMs: number): { id: number; version: number }[] {
    const out: { id: number; version: number }[] = [];
    for (const s of this.sessions.values()) if (s.expirationTime <= nowMs) out.push({ id: s.id, version: s.version });
    return out;
  }

  /** Applies an expiry: sessions still at the named version close; returns the ids closed. */
  expire(list: readonly { id: number; version: number }[]): number[] {
    const closed: number[] = [];
    for (const { id, version } of list) {
      const s = this.sessions.get(id);
      if (s === undefined || s.version !== version) continue;
      this.sessions.delete(id);
      closed.push(id);
    }
    return closed;
  }

  /** A new leader's first commit: every expiry moves one heartbeat interval later. */
  shiftExpirations(): void {
    for (const [id, s] of this.sessions) this.sessions.set(id, { ...s, expirationTime: s.expirationTime + this.times.heartbeatMs, version: s.version + 1 });
  }

  /** Sessions that hold nothing (`holds` says) and were created more than a TTL before `nowMs`. */
  inactive(nowMs: number, holds: (id: number) => boolean): number[] {
    const out: number[] = [];
    for (const s of this.sessions.values()) if (s.creationTime + this.times.ttlMs <= nowMs && !holds(s.id)) out.push(s.id);
    return out;
  }

  /** A group-wide unique thread id (sessionless semaphores' owners). */
  generateThreadId(): number {
    return this.nextThreadId++;
  }

  get(id: number): SessionInfo | undefined {
    return this.sessions.get(id);
  }

  list(): SessionInfo[] {
    return [...this.sessions.values()].sort((a, b) => a.id - b.id);
  }

  snapshot(): unknown {
    return { nextId: this.nextId, nextThreadId: this.nextThreadId, sessions: this.list() };
  }

  restore(state: unknown): void {
    this.sessions.clear();
    this.nextId = 1;
    this.nextThreadId = 1;
    if (state === null || state === undefined) return;
    const s = state as { nextId: number; nextThreadId: number; sessions: SessionInfo[] };
    this.nextId = s.nextId;
    this.nextThreadId = s.nextThreadId;
    for (const x of s.sessions) this.sessions.set(x.id, x);
  }
}
