// The METADATA leader's duties, one round a second (cp-service.ts runs them on the member that
// leads METADATA): commit `init` once discovery named the CP members; move each group toward the
// CP member list one membership change at a time (a member that is no CP member any more leaves
// first, then a group below its size takes the CP member in the fewest groups), recording each
// change in METADATA once the group committed it; remove CP members whose process has been gone
// longer than missing-cp-member-auto-removal-seconds; and every rebalance interval, even out which
// CP member leads which group. No I/O: the host routes calls and appends METADATA commands.
import type { ComponentLogger } from '../util/logger.js';
import type { CallPayload } from './call-wire.js';
import type { CpCallFailure, CpCallResult } from './cp-service.js';
import type { CpGroupInfo, CpMember, CpMetadata, MetadataCommand } from './metadata.js';

export interface DutiesHost {
  /** The CP members discovery named for this seed, or null. */
  discovery(): { readonly members: readonly CpMember[]; readonly groupSize: number } | null;
  /** Routes a call to a group's leader (no invocation: membership changes and reads). */
  call(group: string, payload: CallPayload, done: (r: { ok: true; result: CpCallResult } | { ok: false; failure: CpCallFailure }) => void, o?: { timeoutMs?: number }): void;
  /** Whether a CP member's process is in the cluster. */
  present(m: CpMember): boolean;
  cpMembers(): readonly CpMember[];
  addressOfCp(uuid: string): string | null;
  readonly autoRemovalMs: number;
  readonly rebalanceMs: number;
  readonly log: ComponentLogger;
}

export class MetadataDuties {
  private initInFlight = false;
  private readonly changing = new Set<string>();
  private readonly missingSince = new Map<string, number>();
  private removingMissing = false;
  private lastRebalanceMs = 0;
  private rebalancing = false;

  constructor(private readonly host: DutiesHost) {}

  /** A reset: nothing of the old seed is in flight any more. */
  reset(): void {
    this.initInFlight = false;
    this.changing.clear();
    this.missingSince.clear();
    this.removingMissing = false;
    this.rebalancing = false;
  }

  /** One round on METADATA's leader: `meta` is its state machine, `write` appends a METADATA command. */
  run(meta: CpMetadata, now: number, write: (command: MetadataCommand, done: () => void) => void): void {
    if (!meta.isInitialized()) {
      const d = this.host.discovery();
      if (this.initInFlight || d === null) return;
      this.initInFlight = true;
      write({ kind: 'init', members: d.members, groupSize: d.groupSize }, () => (this.initInFlight = false));
      return;
    }
    // One membership change at a time per group, toward the CP member list.
    for (const g of meta.groupList()) {
      if (this.changing.has(g.name)) continue;
      const change = meta.nextChange(g.name);
      if (change === null) continue;
      this.changing.add(g.name);
      const what = 'add' in change ? `adds ${change.add}` : `removes ${change.remove}`;
      this.host.log.info(`CP group ${g.name}: membership change: ${what}`);
      this.host.call(g.name, { kind: 'change', change }, (r) => {
        if (!r.ok) {
          this.changing.delete(g.name);
          this.host.log.warning(`CP group ${g.name}: the membership change that ${what} did not complete (${r.failure}); it is tried again`);
          return;
        }
        const members = (r.result.value as { members: string[] }).members;
        write({ kind: 'groupMembers', name: g.name, id: g.id, members }, () => this.changing.delete(g.name));
      });
    }
    if (now - this.lastRebalanceMs >= this.host.rebalanceMs && !this.rebalancing) {
      this.lastRebalanceMs = now;
      this.rebalance(meta.groupList());
    }
    // CP members whose process left the cluster, for longer than the auto-removal time.
    const limitMs = this.host.autoRemovalMs;
    for (const m of meta.cpMembers()) {
      if (this.host.present(m)) {
        this.missingSince.delete(m.uuid);
        continue;
      }
      const since = this.missingSince.get(m.uuid) ?? now;
      this.missingSince.set(m.uuid, since);
      if (now - since < limitMs || this.removingMissing) continue;
      this.removingMissing = true;
      this.host.log.warning(`CP member ${m.uuid} (${m.address}) has been missing for ${Math.round((now - since) / 1000)} s: it is removed from the CP subsystem`);
      write({ kind: 'removeMember', uuid: m.uuid }, () => (this.removingMissing = false));
    }
  }

  /**
   * Leaderships spread over the CP members: ask every group its leader; when one CP member leads
   * at least two more groups than another that is in one of them, hand that group to it (one
   * transfer a round, as the reference's balance task does it in steps).
   */
  private rebalance(groups: readonly CpGroupInfo[]): void {
    this.rebalancing = true;
    const leaders = new Map<string, string>();
    let pending = groups.length;
    const done = (): void => {
      if (--pending > 0) return;
      this.rebalancing = false;
      // Only CP members in the cluster may be handed a leadership: a crashed one that is not
      // removed yet leads nothing and looked like the best target, and a transfer to it stalled
      // the group's writes until it timed out, once a round (a removal waited 8.8 s so).
      const count = new Map<string, number>(this.host.cpMembers().filter((m) => this.host.present(m)).map((m) => [m.uuid, 0]));
      for (const l of leaders.values()) if (count.has(l)) count.set(l, (count.get(l) as number) + 1);
      for (const g of groups) {
        const from = leaders.get(g.name);
        if (from === undefined) continue;
        const to = g.members.filter((u) => u !== from && count.has(u)).sort((a, b) => (count.get(a) as number) - (count.get(b) as number))[0];
        if (to === undefined || (count.get(from) as number) - (count.get(to) as number) < 2) continue;
        this.host.log.info(`CP group ${g.name}: leadership moves from ${this.host.addressOfCp(from) ?? from} to ${this.host.addressOfCp(to) ?? to} (leaderships ${count.get(from)} and ${count.get(to)})`);
        this.host.call(g.name, { kind: 'change', change: { lead: to } }, () => {}, { timeoutMs: 5000 });
        return;
      }
    };
    if (pending === 0) this.rebalancing = false;
    for (const g of groups) {
      this.host.call(g.name, { kind: 'read', query: { q: 'status' } }, (r) => {
        if (r.ok) {
          const s = r.result.value as { type: string; leader?: string | null };
          if (s.type === 'status' && typeof s.leader === 'string') leaders.set(g.name, s.leader);
        }
        done();
      }, { timeoutMs: 5000 });
    }
  }

}
