// Commands one member passes to every other member of its cluster: clusterShutdown (each member is
// told to stop, again until it acknowledges) and a new tcp-ip member list (POST
// config/tcp-ip/member-list). From the moment a clusterShutdown starts or reaches a member, that
// member promotes and migrates nothing: members are expected to go.
import { message, type Message, type MessageKind } from '../cluster/messages.js';
import type { MemberContext, MemberService } from '../cluster/service.js';
import type { Peer, Transport } from '../cluster/transport.js';
import type { Clock, TimerHandle, Timers } from '../util/clock.js';

/** A clusterShutdown resends its stop message this often to members that have not acknowledged it. */
const SHUTDOWN_RESEND_MS = 500;

/** What the commands need of the member (the composition root passes it in). */
export interface ClusterCommandsHost extends MemberContext {
  /** The persisted metadata follows `stopping` (a restart resumes the state before the shutdown). */
  saveMetadata(): void;
  /** A clusterShutdown reached this member: stop the process. */
  onShutdownRequested(reason: string): void;
  /** Another member took a new tcp-ip member list: take it too. */
  onMemberListSet?: ((members: readonly string[], from: string) => void) | undefined;
}

export class ClusterCommands implements MemberService {
  readonly name = 'cluster-commands';
  readonly kinds: readonly MessageKind[] = ['shutdownMember', 'shutdownMemberAck', 'memberListSet'];
  /** clusterShutdown is under way: members are expected to go; nothing is promoted or migrated. */
  private stoppingFlag = false;
  /** This member was told to stop by a clusterShutdown (resends are acknowledged, acted on once). */
  private stopRequested = false;
  /** Set while a clusterShutdown waits for acknowledgements. */
  private acks: ((uuid: string, callId: number) => void) | null = null;
  private nextCall = 1;

  constructor(
    private readonly host: ClusterCommandsHost,
    private readonly transport: Transport,
    private readonly clock: Clock,
    private readonly timers: Timers,
  ) {}

  /** A clusterShutdown is under way on this member. */
  get stopping(): boolean {
    return this.stoppingFlag;
  }

  handle(from: Peer, m: Message): void {
    const h = this.host;
    switch (m.kind) {
      case 'shutdownMember':
        // Only from a member of this member's cluster: the initiator resends by address, and a new
        // process at a stopped member's address (restarted meanwhile) must not take it as its own.
        if (!h.joined() || !h.isMember(from.uuid)) return;
        // Acknowledge every copy (the initiator resends until it hears back), act on the first.
        this.stoppingFlag = true;
        h.saveMetadata();
        if (m.callId !== 0) this.transport.send(from.address, message('shutdownMemberAck', { uuid: h.selfUuid }, m.callId));
        if (!this.stopRequested) {
          this.stopRequested = true;
          h.onShutdownRequested(m.body.reason);
        }
        return;
      case 'shutdownMemberAck':
        this.acks?.(from.uuid, m.callId);
        return;
      case 'memberListSet':
        if (h.isMember(from.uuid)) h.onMemberListSet?.(m.body.members, from.address);
        return;
      default:
        return;
    }
  }

  /**
   * clusterShutdown: every other member is told to stop, again every SHUTDOWN_RESEND_MS until it
   * acknowledges, for at most `waitMs`. From now on nothing is promoted or migrated here (members are
   * expected to go). Resolves with the addresses of the members that did not acknowledge.
   */
  shutdownOthers(reason: string, waitMs: number): Promise<string[]> {
    this.stoppingFlag = true;
    this.host.saveMetadata();
    const others = this.others();
    const callId = this.nextCall++;
    const deadline = this.clock.monotonicMs() + waitMs;
    return new Promise((resolve) => {
      let timer: TimerHandle | null = null;
      const done = (): void => {
        if (timer !== null) this.timers.clearTimeout(timer);
        this.acks = null;
        resolve([...others.values()]);
      };
      this.acks = (uuid, id) => {
        if (id !== callId || !others.delete(uuid)) return;
        if (others.size === 0) done();
      };
      const send = (): void => {
        if (others.size === 0 || this.clock.monotonicMs() >= deadline) {
          done();
          return;
        }
        for (const address of others.values()) this.transport.send(address, message('shutdownMember', { reason }, callId));
        timer = this.timers.setTimeout(send, SHUTDOWN_RESEND_MS);
      };
      send();
    });
  }

  /** The other members of the list: UUID → address. */
  private others(): Map<string, string> {
    const out = new Map<string, string>();
    for (const u of this.host.memberUuids()) {
      const address = this.host.addressOf(u);
      if (u !== this.host.selfUuid && address !== null) out.set(u, address);
    }
    return out;
  }

  /** Sends a new tcp-ip member list to every other member (each applies it; see onMemberListSet). */
  broadcastMemberList(members: readonly string[]): void {
    for (const uuid of this.others().keys()) this.host.send(uuid, message('memberListSet', { members: [...members] }));
  }
}
