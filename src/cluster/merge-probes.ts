// Split-brain probing (cluster.md "Split brain"), membership's part that finds other sides. The
// master probes every address it knows of that is not in its list, every probe interval
// (mergeProbe). Members of another side answer with their master and their cluster as they are now;
// a master that is probed probes back at once instead of deciding on the probe. A merge is decided
// only on an answer to this master's latest probe of that address that came back within half an
// interval: both sides decide on each other's cluster as it is now. When the master meets the
// master of another side and its own side is the smaller, membership merges it into the other.
import { message, type MemberWire, type MessageOf } from './messages.js';
import type { Transport } from './transport.js';
import type { Clock } from '../util/clock.js';
import type { ComponentLogger } from '../util/logger.js';

/** Who a cluster is, as compared when two meet after a split brain. */
export interface ClusterInfo {
  readonly clusterId: string;
  readonly dataMembers: number;
  readonly foundedAtMs: number;
}

/**
 * Whether cluster `a` (master `aMaster`) merges into cluster `b`: fewer data members; tie: younger;
 * tie: greater id; tie (two halves of one cluster split apart, same id): greater master uuid.
 */
export function mergesInto(a: ClusterInfo, aMaster: string, b: ClusterInfo, bMaster: string): boolean {
  if (a.dataMembers !== b.dataMembers) return a.dataMembers < b.dataMembers;
  if (a.foundedAtMs !== b.foundedAtMs) return a.foundedAtMs > b.foundedAtMs;
  if (a.clusterId !== b.clusterId) return a.clusterId > b.clusterId;
  return aMaster > bMaster;
}

/** What the probes read of membership, and how a merge is made. */
export interface MergeProbesHost {
  readonly self: MemberWire;
  readonly selfAddress: string;
  joined(): boolean;
  isMaster(): boolean;
  isMember(uuid: string): boolean;
  clusterId(): string;
  clusterInfo(): ClusterInfo;
  masterAddress(): string;
  /** Addresses of the member list. */
  listAddresses(): ReadonlySet<string>;
  /** Every address this member knows of: join addresses and every member it has seen. */
  knownAddresses(): Iterable<string>;
  /** This master's side merges into the cluster whose master is at `address`. */
  mergeInto(address: string, why: string): void;
  readonly counters: { staleProbeAnswers: number; merges: number };
}

export class MergeProbes {
  private lastProbeMs = 0;
  /** The last probe round number, and per address the latest probe sent there and when (monotonic ms). */
  private probeId = 0;
  private readonly sent = new Map<string, { readonly id: number; readonly atMs: number }>();

  constructor(
    private readonly h: MergeProbesHost,
    private readonly intervalMs: number,
    private readonly transport: Transport,
    private readonly clock: Clock,
    private readonly log: ComponentLogger,
  ) {}

  /** Whether a probe round is due (master). */
  due(now: number): boolean {
    return now - this.lastProbeMs >= this.intervalMs;
  }

  /** This member left its cluster: answers to its earlier probes no longer count. */
  reset(): void {
    this.sent.clear();
  }

  /** Master: asks every known address outside the cluster whether a master of another cluster is there. */
  probe(now: number): void {
    this.lastProbeMs = now;
    this.probeId++;
    const inList = this.h.listAddresses();
    const request = message('mergeProbe', { member: this.h.self, cluster: this.h.clusterInfo(), probeId: this.probeId });
    for (const a of new Set(this.h.knownAddresses())) {
      if (inList.has(a) || a === this.h.selfAddress) continue;
      this.sent.set(a, { id: this.probeId, atMs: now });
      this.transport.send(a, request);
    }
  }

  /**
   * A split-brain probe from the master of a cluster: ours, or another side. Members of another side
   * answer with their master and cluster as they are now. A master also probes the prober at once
   * instead of deciding on the probe: the probe may have waited in a partitioned connection and
   * describe the prober's cluster as it was (seed 520 with --register --tcp: both masters merged
   * into each other, one on a fresh answer, one on a probe held through the partition).
   */
  onProbe(m: MessageOf<'mergeProbe'>): void {
    const prober = m.body.member;
    if (!this.isOtherSide(m.body.cluster, prober.uuid)) return;
    const proberAddress = `${prober.host}:${prober.port}`;
    this.transport.send(
      proberAddress,
      message('mergeProbeAnswer', { probeId: m.body.probeId, uuid: this.h.self.uuid, address: this.h.selfAddress, masterAddress: this.h.masterAddress(), cluster: this.h.clusterInfo() }),
    );
    if (!this.h.isMaster()) return;
    const now = this.clock.monotonicMs();
    const sent = this.sent.get(proberAddress);
    if (sent === undefined || now - sent.atMs > this.intervalMs / 2) this.sendProbe(proberAddress, now);
  }

  /**
   * Master: an answer to a probe. Merges are decided only on an answer to this master's latest probe
   * round that came back within half a probe interval, so both sides decide on each other's cluster
   * as it is now: an answer held in a partitioned connection describes a cluster that may since have
   * grown, shrunk or merged.
   */
  onAnswer(m: MessageOf<'mergeProbeAnswer'>): void {
    const b = m.body;
    if (!this.h.isMaster() || !this.isOtherSide(b.cluster, b.uuid)) return;
    const now = this.clock.monotonicMs();
    const sent = this.sent.get(b.address);
    if (sent === undefined || sent.id !== b.probeId || now - sent.atMs > this.intervalMs / 2) {
      this.h.counters.staleProbeAnswers++;
      return;
    }
    if (b.masterAddress === b.address) this.considerMerge(b.cluster, b.address, b.uuid);
    else if (b.masterAddress !== '') this.sendProbe(b.masterAddress, now);
  }

  /**
   * Master: probes one address now (a master learned from an answer, or a prober): answers to an
   * earlier probe of that address no longer count.
   */
  private sendProbe(address: string, now: number): void {
    if (address === this.h.selfAddress || this.h.listAddresses().has(address)) return;
    this.probeId++;
    this.sent.set(address, { id: this.probeId, atMs: now });
    this.transport.send(address, message('mergeProbe', { member: this.h.self, cluster: this.h.clusterInfo(), probeId: this.probeId }));
  }

  /**
   * Whether a joined member of cluster `info` is on another side of a split brain: another cluster,
   * or the same one (split apart after a mastership claim) that no longer lists it.
   */
  private isOtherSide(info: ClusterInfo, uuid: string): boolean {
    if (!this.h.joined() || info.clusterId === '') return false;
    return info.clusterId !== this.h.clusterId() || !this.h.isMember(uuid);
  }

  /** Master: met the master of another side at `address`; merge into it when this side is smaller. */
  private considerMerge(other: ClusterInfo, address: string, otherMaster: string): void {
    const mine = this.h.clusterInfo();
    if (!mergesInto(mine, this.h.self.uuid, other, otherMaster)) return;
    const why =
      mine.dataMembers !== other.dataMembers
        ? `it has ${other.dataMembers} data member(s), this cluster ${mine.dataMembers}`
        : mine.foundedAtMs !== other.foundedAtMs
          ? `both have ${mine.dataMembers} data member(s) and this cluster is younger (founded ${new Date(mine.foundedAtMs).toISOString()}, the other ${new Date(other.foundedAtMs).toISOString()})`
          : mine.clusterId !== other.clusterId
            ? `both have ${mine.dataMembers} data member(s), were founded at the same time, and this cluster's id is greater`
            : `both are halves of cluster ${mine.clusterId} with ${mine.dataMembers} data member(s), and this master's uuid is greater`;
    this.h.counters.merges++;
    this.log.warning(`split brain: cluster ${mine.clusterId} merges into cluster ${other.clusterId} (master ${address}) because ${why}`);
    this.h.mergeInto(address, why);
  }
}
