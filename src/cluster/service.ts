// The member-service seam. A service (membership, replication, migration, the data calls, WAN, the
// cluster-state change, the graceful leave, whole-cluster recovery, hot backup, the hand-back after a
// split, and later CP) declares the member-protocol message kinds it owns and the membership events
// it reacts to. The composition root (member/cluster-node.ts) registers the services in a
// ServiceTable and routes every inbound message from the table: one owner per kind, checked at
// registration (and, for every kind the protocol has, by tests/unit/service-seam.test.ts).
//
// Services never import each other: they meet through the narrow interfaces the root passes in.
// Events go to the services in registration order, which the root chooses, so one that must act
// before another (the migration service adopts the master's table before the others look at it)
// is registered first.
import type { Message, MessageKind, MessageOf } from './messages.js';
import type { Peer } from './transport.js';
import type { RequestableClusterState } from './cluster-state.js';

/** A view of the member list the member adopted: who came and who went, by UUID, in list order. */
export interface ViewChange {
  readonly view: MessageOf<'membersView'>['body'];
  readonly added: readonly string[];
  readonly removed: readonly string[];
  /** The list's size or members differ from the previous view's (not only its version). */
  readonly changed: boolean;
}

/**
 * The membership events a service may react to. Each has a fixed place in the sequence the root
 * emits for one adopted view: `viewFromMaster` (members only, not the master), then `memberRemoved`
 * for each member gone (every service for one member before the next), `memberAdded` likewise,
 * `masterChanged` when the master is another one, `rejoined` on the first view after the member
 * left its cluster, and `membersChanged` last.
 */
export interface MembershipEvents {
  /** A member (not the master) adopted the master's view: the table and state it carries apply. */
  viewFromMaster?(view: MessageOf<'membersView'>['body']): void;
  memberRemoved?(uuid: string): void;
  /** A member came into the list (this member too, in the first view after it joins). */
  memberAdded?(uuid: string): void;
  /** The master is another member now (this one, possibly), or the first master after joining or rejoining. */
  masterChanged?(masterUuid: string): void;
  /** The first view after this member left its cluster (removed, or merging into another). */
  rejoined?(): void;
  /** After the per-member events of a view. */
  membersChanged?(change: ViewChange): void;
  /** This member was cut off (removed by its master, or merging into a larger cluster). */
  leftCluster?(reason: string): void;
  /** The cluster state changed on this member (a committed change, or the master's view). */
  stateChanged?(state: RequestableClusterState): void;
}

export interface MemberService extends MembershipEvents {
  /** For errors and the routing table's listing. */
  readonly name: string;
  /** The member-protocol message kinds this service owns (one owner per kind). */
  readonly kinds: readonly MessageKind[];
  /** A message of one of its kinds (required when it owns any). Whom it accepts a kind from is the service's own rule. */
  handle?(from: Peer, m: Message): void;
}

/**
 * What every service may know of the member it runs in: who it is, its cluster's members and
 * master, and a way to send to a member by UUID (to itself too: delivered on a later turn). Each
 * service's host interface extends this with the few things of other services it needs.
 */
export interface MemberContext {
  readonly selfUuid: string;
  joined(): boolean;
  isMaster(): boolean;
  isMember(uuid: string): boolean;
  masterUuid(): string | null;
  /** UUIDs of the member list; this member alone when it has not joined. */
  memberUuids(): string[];
  addressOf(uuid: string): string | null;
  send(uuid: string, m: Message): void;
}

type EventName = keyof MembershipEvents;
type EventArgs<E extends EventName> = Parameters<NonNullable<MembershipEvents[E]>>;

/** The routing table: message kind → owning service; events to every service, in registration order. */
export class ServiceTable {
  private readonly byKind = new Map<MessageKind, MemberService>();
  private readonly list: MemberService[] = [];

  /** Adds a service; a kind another service owns already is a programming error. */
  register(service: MemberService): void {
    if (this.list.some((s) => s.name === service.name)) throw new Error(`a service named ${service.name} is registered already`);
    if (service.kinds.length > 0 && service.handle === undefined) throw new Error(`service ${service.name} owns message kinds but handles none`);
    for (const kind of service.kinds) {
      const owner = this.byKind.get(kind);
      if (owner !== undefined) throw new Error(`message kind ${kind}: owned by ${owner.name} and ${service.name}`);
    }
    for (const kind of service.kinds) this.byKind.set(kind, service);
    this.list.push(service);
  }

  /** Hands the message to its kind's owner; false when no service owns the kind. */
  route(from: Peer, m: Message): boolean {
    const s = this.byKind.get(m.kind);
    if (s === undefined) return false;
    s.handle?.(from, m);
    return true;
  }

  /** Every service that reacts to the event, in registration order. */
  emit<E extends EventName>(event: E, ...args: EventArgs<E>): void {
    for (const s of this.list) {
      const f = s[event] as ((...a: EventArgs<E>) => void) | undefined;
      if (f !== undefined) f.apply(s, args);
    }
  }

  /** The owner of a kind, by name, or null. */
  ownerOf(kind: MessageKind): string | null {
    return this.byKind.get(kind)?.name ?? null;
  }

  /** The registered services' names, in registration order. */
  get names(): readonly string[] {
    return this.list.map((s) => s.name);
  }
}
