// The seam between the cluster cores and the network. The real twin is runtime/tcp-transport.ts
// (one TCP connection per member pair, handshake, reconnect with backoff, write queues capped in
// bytes); the simulated twin is tests/harness/sim-network.ts. Cores only see this interface.
//
// Contract:
// - send() never throws for network trouble and never blocks: it queues the message for the member
//   at `address` ("host:port"), dialling and handshaking first if needed. Delivery is best effort;
//   messages to one address that are delivered arrive in the order sent (until a connection drops).
//   It returns false when the message was dropped at once (write queue over its byte cap, transport
//   closed, address refused as foreign).
// - Inbound messages reach the handler with the peer's identity from its handshake.
// - A peer that turns out to be another cluster (cluster-name mismatch) or incompatible is reported
//   through onRefused and never delivers messages; nobody shuts down because of it.
// - A failed dial says whether the peer's host refused the connection (ECONNREFUSED: nothing
//   listens at that port, as after a process died) or failed otherwise (a timeout, an unreachable
//   host, a reset). Only the first is evidence of a dead process: a paused process or a dropped
//   network makes dials hang, never refused. A refused handshake is neither (onRefused).
import type { Message } from './messages.js';

export interface Peer {
  readonly uuid: string;
  /** The address the peer advertised in its handshake ("host:port"). */
  readonly address: string;
}

export interface TransportHandler {
  onMessage(from: Peer, message: Message): void;
  /** A handshake with `address` was refused (soft: another cluster; hard: incompatible). */
  onRefused(address: string, reason: string, hard: boolean): void;
  /**
   * A dial to `address` failed. `refused`: the connection itself was refused (ECONNREFUSED, nothing
   * listens there); false for every other failure (timeout, unreachable host, reset, closed before
   * the handshake finished).
   */
  onUnreachable?(address: string, refused: boolean): void;
  /** The open connection to `peer` closed (either side, any cause) and no other one to it is open. */
  onDisconnected?(peer: Peer): void;
}

export interface Transport {
  send(address: string, message: Message): boolean;
  /**
   * Closes the connection to the address (a member was removed); later sends dial again. With
   * `uuid`, only a connection to that member: a new incarnation at the same address keeps its own.
   */
  disconnect(address: string, uuid?: string): void;
  /** Open, handshaken member connections. */
  connectionCount(): number;
  /** Frame bytes sent and received so far (a transport that does not count may leave this out). */
  traffic?(): { sent: number; received: number };
}
