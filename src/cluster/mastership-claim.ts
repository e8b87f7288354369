// Mastership claims (cluster.md "Failure detection"). When the master and every member older than
// this one are suspected, this member asks the others to accept it as master and takes over with
// those that accept (every answer, or whatever came within the claim timeout; one refusal ends the
// claim); membership turns a finished claim into the new member list. A member asked accepts when
// every member older than the candidate is silent to it too, answers with its view, and from then
// on takes the claimant's views, unless it followed its old master again meanwhile or the claimant
// did not take its table: then it leaves and joins the claimant as a merging member does.
import { message, type MemberWire, type MessageOf, type ViewWire } from './messages.js';
import type { Peer, Transport } from './transport.js';
import type { Clock } from '../util/clock.js';
import type { ComponentLogger } from '../util/logger.js';

/** What a claim reads of membership, and how it takes over. */
export interface ClaimHost {
  readonly self: MemberWire;
  members(): readonly MemberWire[];
  isMaster(): boolean;
  isSuspect(uuid: string): boolean;
  addressOfUuid(uuid: string): string | null;
  /** When a member was last heard (monotonic ms; 0: never). */
  silentSinceMs(uuid: string): number;
  /** The version of the partition table this member holds. */
  tableVersion(): number;
  /** The claim is over: this member takes over with `keep` (itself and those that accepted), from their views. */
  takeOver(keep: ReadonlySet<string>, views: readonly ViewWire[]): void;
  readonly counters: { claims: number };
}

export class MastershipClaim {
  private claim: { readonly answers: Map<string, ViewWire>; readonly asked: Set<string>; readonly startMs: number } | null = null;
  /** The member whose mastership claim this one accepted last (its views are taken). */
  private acceptedClaimant: string | null = null;
  /** This member's table version when it accepted that claim (its answer carried that table). */
  private acceptedTableVersion = -1;
  /** When it accepted that claim (monotonic ms). */
  private acceptedAtMs = 0;

  constructor(
    private readonly h: ClaimHost,
    private readonly timeoutMs: number,
    private readonly maxNoHeartbeatMs: number,
    private readonly transport: Transport,
    private readonly clock: Clock,
    private readonly log: ComponentLogger,
  ) {}

  /** Starts a claim when every member older than this one is suspected (and none runs). */
  maybeStart(): void {
    if (this.claim !== null || this.h.isMaster()) return;
    const members = this.h.members();
    const self = this.h.self.uuid;
    const myIndex = members.findIndex((x) => x.uuid === self);
    if (myIndex <= 0) return;
    const older = members.slice(0, myIndex);
    if (!older.every((x) => this.h.isSuspect(x.uuid))) return;
    this.h.counters.claims++;
    const asked = new Set(members.filter((x) => x.uuid !== self && !this.h.isSuspect(x.uuid)).map((x) => x.uuid));
    this.log.warning(`master ${members[0]?.uuid ?? '?'} suspected; claiming mastership, asking ${asked.size} member(s)`);
    this.claim = { answers: new Map(), asked, startMs: this.clock.monotonicMs() };
    const request = message('claimRequest', { candidateUuid: self });
    for (const u of asked) {
      const a = this.h.addressOfUuid(u);
      if (a !== null) this.transport.send(a, request);
    }
    if (asked.size === 0) this.finish();
  }

  /** A tick: a claim past its timeout takes over with the answers it has. */
  tick(now: number): void {
    if (this.claim !== null && now - this.claim.startMs >= this.timeoutMs) this.finish();
  }

  onAnswer(from: Peer, m: MessageOf<'claimAnswer'>): void {
    const c = this.claim;
    if (c === null || !c.asked.has(from.uuid)) return;
    if (!m.body.accepted) {
      this.log.warning(`mastership claim rejected by ${from.address}`);
      this.claim = null;
      return;
    }
    c.answers.set(from.uuid, m.body.view);
    if (c.answers.size === c.asked.size) this.finish();
  }

  /** A member asked will not answer (it is not in this cluster): the claim stops waiting for it. */
  giveUpOn(uuid: string): void {
    const c = this.claim;
    if (c !== null && c.asked.delete(uuid) && c.answers.size === c.asked.size) this.finish();
  }

  /** A joined member is asked to accept a claim: it does when every member older than the candidate is silent to it too (or gone). */
  answer(from: Peer, m: MessageOf<'claimRequest'>, view: ViewWire): void {
    const members = this.h.members();
    const candidateIndex = members.findIndex((x) => x.uuid === m.body.candidateUuid);
    const now = this.clock.monotonicMs();
    const accepted = candidateIndex > 0 && members.slice(0, candidateIndex).every((x) => this.h.isSuspect(x.uuid) || now - this.h.silentSinceMs(x.uuid) > this.maxNoHeartbeatMs / 2);
    if (accepted) {
      this.acceptedClaimant = m.body.candidateUuid;
      this.acceptedTableVersion = this.h.tableVersion();
      this.acceptedAtMs = now;
    }
    this.transport.send(from.address, message('claimAnswer', { accepted, view }, m.callId));
  }

  /**
   * Whether this member is claiming mastership, or accepted another member's claim and its view may
   * still come (twice the claim timeout: the claimant takes over at most one timeout after asking).
   * Meanwhile it confirms no move of its old master: the claimant's table is built from the table
   * this member answered with, and a move committed after it would give a partition to replicas
   * that claimant never hears of, while its own table keeps the old owner that it removes (seed
   * 2077691 with --overlap: a master paused 9.6 s woke, took a write as the only replica of a
   * partition, moved it to two members that had answered the claim, and the claimer, finding no
   * replica left, started the partition empty).
   */
  claimPending(now: number): boolean {
    return this.claim !== null || (this.acceptedClaimant !== null && now - this.acceptedAtMs < 2 * this.timeoutMs);
  }

  isAcceptedClaimant(uuid: string): boolean {
    return uuid === this.acceptedClaimant;
  }

  /** This member adopted a view: an earlier acceptance is spent. */
  forgetAccepted(): void {
    this.acceptedClaimant = null;
  }

  /**
   * A view from the claimant this member accepted: why it must leave and join it as a merging member
   * does instead of adopting the view, or null.
   */
  reasonToLeaveFor(address: string, view: ViewWire, tableVersion: number): string | null {
    // Since answering the claim this member followed its old master again (it heard it once the
    // network healed, and took its tables): it may own partitions and hold writes the claimer's
    // table, built from the answers, knows nothing of. Adopting the view would let the claimer's
    // stale copies replace them (seed 214595 with --overlap).
    if (tableVersion !== this.acceptedTableVersion) return `the member ${address}, whose mastership claim this member accepted, took over after this member followed its old master again`;
    // The claimer did not take the table this member answered with: it came from a master that had
    // removed the claimer (the other half of a split). Adopting the view would leave this member on
    // a table newer than every table its new master makes, taking none of them, and the partitions
    // that table gave it could never move (seed 1036190 never settled). Its copies may hold writes
    // taken under that table.
    if (view.table.version < tableVersion) return `the member ${address}, whose mastership claim this member accepted, did not take this member's partition table (version ${tableVersion}, from a master that had removed it)`;
    return null;
  }

  /** This member adopted a view or left its cluster: the claim is moot. */
  cancel(): void {
    this.claim = null;
  }

  private finish(): void {
    const c = this.claim;
    if (c === null) return;
    this.claim = null;
    this.h.takeOver(new Set([this.h.self.uuid, ...c.answers.keys()]), [...c.answers.values()]);
  }
}
