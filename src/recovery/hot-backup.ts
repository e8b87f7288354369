// Hot backup (cluster.md "Persistence", rest.md's backup call): the member a backup is asked of
// coordinates it. A first round asks every member for the last backup number it took part in; the
// second tells every member to copy its store to backup-dir/backup-<seq>/<uuid>/ with seq one above
// the highest, the same on every member. The call resolves once every copy is complete, or with
// why not (a member failed, left, or did not finish within BACKUP_WAIT_MS).
import { message, type Message, type MessageKind } from '../cluster/messages.js';
import type { MemberContext, MemberService } from '../cluster/service.js';
import type { Peer } from '../cluster/transport.js';
import type { MemberMetadata } from '../persistence/member-metadata.js';
import type { NodePersistence } from '../persistence/node-persistence.js';
import type { Clock, TimerHandle, Timers } from '../util/clock.js';
import type { ComponentLogger } from '../util/logger.js';

/** A backup's coordinator waits this long for every member's copy. */
const BACKUP_WAIT_MS = 30 * 60_000;

/** What the backup needs of the member (the composition root passes it in). */
export interface HotBackupHost extends MemberContext {
  recovering(): boolean;
  metadataNow(): MemberMetadata;
  saveMetadata(): void;
}

export class HotBackup implements MemberService {
  readonly name = 'hot-backup';
  readonly kinds: readonly MessageKind[] = ['backupStart', 'backupResult', 'backupInterrupt'];
  /** The last backup sequence number this member took part in (persisted in its metadata). */
  private lastSeq: number;
  /** This member's part of a backup that is running, or null. */
  private run: { seq: number; interrupt: () => void } | null = null;
  /** The backup this member coordinates, or null. */
  private coordination: { seq: number; waiting: Set<string>; failures: string[]; higherSeq: number; answer: (ok: boolean, message: string) => void; timer: TimerHandle } | null = null;

  constructor(
    private readonly host: HotBackupHost,
    private readonly persistence: NodePersistence | null,
    private readonly clock: Clock,
    private readonly timers: Timers,
    private readonly log: ComponentLogger,
  ) {
    this.lastSeq = persistence?.setup.metadata?.backupSeq ?? 0;
  }

  /** The last backup sequence number this member took part in. */
  get seq(): number {
    return this.lastSeq;
  }

  handle(from: Peer, m: Message): void {
    const fromMember = this.host.isMember(from.uuid) || from.uuid === this.host.selfUuid;
    switch (m.kind) {
      case 'backupStart':
        if (fromMember) this.onStart(from, m.body.seq);
        return;
      case 'backupResult':
        this.onResult(from, m.body);
        return;
      case 'backupInterrupt':
        if (fromMember) this.run?.interrupt();
        return;
      default:
        return;
    }
  }

  /** A member left the cluster: a backup this member coordinates stops waiting for it. */
  memberRemoved(uuid: string): void {
    const c = this.coordination;
    if (c === null || !c.waiting.delete(uuid)) return;
    c.failures.push(`${uuid}: left the cluster during the backup`);
    if (c.waiting.size === 0) this.finish(null);
  }

  /** `backup` through this member: resolves once every copy is complete, or with why not. */
  start(): Promise<{ ok: boolean; message: string }> {
    if (this.persistence === null) return Promise.resolve({ ok: false, message: 'persistence is not enabled' });
    if (this.host.recovering()) return Promise.resolve({ ok: false, message: 'recovery in progress: no backup until the cluster has resumed' });
    if (this.coordination !== null) return Promise.resolve({ ok: false, message: 'a backup is already running' });
    return new Promise((resolve) => {
      // Round 0 asks every member for its last backup number; round `seq` copies.
      const round = (seq: number): void => {
        const members = this.host.memberUuids();
        const timer = this.timers.setTimeout(() => this.finish(`members did not finish within ${BACKUP_WAIT_MS / 1000} s`), BACKUP_WAIT_MS);
        this.coordination = {
          seq,
          waiting: new Set(members),
          failures: [],
          higherSeq: this.lastSeq,
          timer,
          answer: (ok, text) => {
            const c = this.coordination;
            this.coordination = null;
            if (seq === 0 && ok && c !== null) return round(c.higherSeq + 1);
            resolve({ ok, message: text });
          },
        };
        if (seq > 0) this.log.info(`persistence: backup ${seq} started on ${members.length} member(s)`);
        for (const u of members) this.host.send(u, message('backupStart', { seq }));
      };
      round(0);
    });
  }

  /** `backupInterrupt` through this member: every member stops the backup it runs. */
  interrupt(): void {
    for (const u of this.host.memberUuids()) this.host.send(u, message('backupInterrupt', {}));
  }

  private onStart(from: Peer, seq: number): void {
    const reply = (ok: boolean, text: string): void => this.host.send(from.uuid, message('backupResult', { seq, ok, message: text, lastSeq: this.lastSeq }));
    const p = this.persistence;
    if (p === null) return reply(false, 'persistence is not enabled on this member');
    if (p.setup.backupDir === '') return reply(false, 'no backup-dir is configured on this member');
    if (this.run !== null) return reply(false, `backup ${this.run.seq} is running on this member`);
    if (seq === 0) return reply(true, ''); // the number round
    if (seq <= this.lastSeq) return reply(false, `this member already took part in backup ${this.lastSeq}`);
    this.lastSeq = seq;
    let finished = false;
    const target = `${p.setup.backupDir}/backup-${seq}/${this.host.selfUuid}`;
    const startedMs = this.clock.monotonicMs();
    const interrupt = p.backup(target, this.host.metadataNow(), (fn) => void this.timers.setTimeout(fn, 0), (error) => {
      finished = true;
      this.run = null;
      this.host.saveMetadata();
      if (error === null) this.log.info(`persistence: backup ${seq} copied to ${target} in ${Math.round(this.clock.monotonicMs() - startedMs)} ms`);
      else this.log.warning(`persistence: backup ${seq} on this member failed: ${error.message}`);
      reply(error === null, error === null ? '' : error.message);
    });
    if (!finished) this.run = { seq, interrupt };
  }

  private onResult(from: Peer, b: { seq: number; ok: boolean; message: string; lastSeq: number }): void {
    const c = this.coordination;
    if (c === null || b.seq !== c.seq || !c.waiting.delete(from.uuid)) return;
    c.higherSeq = Math.max(c.higherSeq, b.lastSeq);
    if (!b.ok) c.failures.push(`${this.host.addressOf(from.uuid) ?? from.uuid}: ${b.message}`);
    if (c.waiting.size === 0) this.finish(null);
  }

  private finish(timeout: string | null): void {
    const c = this.coordination;
    if (c === null) return;
    this.timers.clearTimeout(c.timer);
    if (timeout !== null) c.failures.push(timeout);
    const ok = c.failures.length === 0;
    if (c.seq > 0 || !ok) this.log.info(`persistence: backup ${c.seq} ${ok ? 'complete on every member' : `failed: ${c.failures.join('; ')}`}`);
    c.answer(ok, ok ? '' : `backup ${c.seq} failed: ${c.failures.join('; ')}`);
  }
}
