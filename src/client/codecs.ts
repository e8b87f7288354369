// The messages of the client protocol that connecting needs: authentication, the cluster view
// events (member list, partition table) and the empty answers (facts in
// reference/client-protocol.md §2-§4). Message type = service << 16 | method << 8 | n (0 request,
// 1 response, 2.. events). I/O-free.
import { MessageReader, MessageWriter, UUID_BYTES, writeUuid, type Uuid } from './message.js';

export const MESSAGE = {
  AUTHENTICATION: 0x000100,
  AUTHENTICATION_RESPONSE: 0x000101,
  AUTHENTICATION_CUSTOM: 0x000200,
  ADD_CLUSTER_VIEW_LISTENER: 0x000300,
  ADD_CLUSTER_VIEW_LISTENER_RESPONSE: 0x000301,
  MEMBERS_VIEW_EVENT: 0x000302,
  PARTITIONS_VIEW_EVENT: 0x000303,
  CREATE_PROXY: 0x000400,
  /** The proxies a client had, sent again when it connects to a cluster with another id. */
  CREATE_PROXIES: 0x000e00,
  DESTROY_PROXY: 0x000500,
  PING: 0x000b00,
  STATISTICS: 0x000c00,
  LOCAL_BACKUP_LISTENER: 0x000f00,
} as const;

/** The response type of a request type. */
export function responseType(requestType: number): number {
  return requestType + 1;
}

export const AUTH_STATUS = { AUTHENTICATED: 0, CREDENTIALS_FAILED: 1, SERIALIZATION_VERSION_MISMATCH: 2, NOT_ALLOWED_IN_CLUSTER: 3 } as const;

export interface AuthenticationRequest {
  readonly clientUuid: Uuid;
  readonly serializationVersion: number;
  readonly clusterName: string;
  readonly username: string | null;
  readonly password: string | null;
  readonly clientType: string;
  readonly clientVersion: string;
  readonly clientName: string;
  readonly labels: readonly string[];
}

/** Labels a client may send: enough for any real client, bounded for a hostile one. */
const LABELS_MAX = 1024;

/** Decodes `Client.authentication`; fields a newer client appends are ignored. */
export function decodeAuthentication(r: MessageReader): AuthenticationRequest {
  return {
    clientUuid: r.uuid(0, 'clientUuid'),
    serializationVersion: r.byte(UUID_BYTES, 'serializationVersion'),
    clusterName: r.string('clusterName'),
    username: r.nullableString('username'),
    password: r.nullableString('password'),
    clientType: r.string('clientType'),
    clientVersion: r.string('clientHazelcastVersion'),
    clientName: r.string('clientName'),
    labels: r.stringList('labels', LABELS_MAX),
  };
}

export interface AuthenticationAnswer {
  readonly status: number;
  /** The address clients should dial for this member; null in a refusal. */
  readonly address: { readonly host: string; readonly port: number } | null;
  readonly memberUuid: Uuid;
  readonly serializationVersion: number;
  readonly partitionCount: number;
  readonly clusterId: Uuid;
  readonly serverVersion: string;
}

export function encodeAuthenticationResponse(correlationId: bigint, a: AuthenticationAnswer): Buffer {
  // status (1) + member UUID (17) + serialization version (1) + partition count (4) + cluster id (17) + failover (1)
  const w = MessageWriter.response(MESSAGE.AUTHENTICATION_RESPONSE, correlationId, 1 + UUID_BYTES + 1 + 4 + UUID_BYTES + 1)
    .setByte(0, a.status)
    .setUuid(1, a.memberUuid)
    .setByte(1 + UUID_BYTES, a.serializationVersion)
    .setInt(2 + UUID_BYTES, a.partitionCount)
    .setUuid(6 + UUID_BYTES, a.clusterId)
    .setBoolean(6 + 2 * UUID_BYTES, false);
  if (a.address === null) w.nullFrame();
  else addAddress(w, a.address.host, a.address.port);
  return w.string(a.serverVersion).build();
}

function addAddress(w: MessageWriter, host: string, port: number): void {
  const fixed = Buffer.alloc(4);
  fixed.writeInt32LE(port, 0);
  w.begin().fixedFrame(fixed).string(host).end();
}

/** An empty response (create/destroy proxy, ping, statistics, add cluster view listener). */
export function encodeEmptyResponse(requestType: number, correlationId: bigint): Buffer {
  return MessageWriter.response(responseType(requestType), correlationId).build();
}

/** The local backup listener's registration answer: a registration UUID (no event is ever sent). */
export function encodeUuidResponse(requestType: number, correlationId: bigint, uuid: Uuid): Buffer {
  return MessageWriter.response(responseType(requestType), correlationId, UUID_BYTES).setUuid(0, uuid).build();
}

export interface ViewMember {
  readonly uuid: Uuid;
  readonly lite: boolean;
  readonly host: string;
  readonly port: number;
  /** major, minor, patch of the member's version. */
  readonly version: readonly [number, number, number];
}

/** The member list event on a cluster view registration. */
export function encodeMembersView(correlationId: bigint, version: number, members: readonly ViewMember[]): Buffer {
  const w = MessageWriter.event(MESSAGE.MEMBERS_VIEW_EVENT, correlationId, 4).setInt(0, version).begin();
  for (const m of members) {
    const fixed = Buffer.alloc(UUID_BYTES + 1);
    writeUuid(fixed, 0, m.uuid);
    fixed[UUID_BYTES] = m.lite ? 1 : 0;
    w.begin().fixedFrame(fixed);
    addAddress(w, m.host, m.port);
    w.begin().end(); // attributes: none
    w.begin().fixedFrame(Buffer.from([m.version[0] & 0xff, m.version[1] & 0xff, m.version[2] & 0xff])).end();
    w.begin().end(); // address map: none (the member address serves every endpoint)
    w.end();
  }
  return w.end().build();
}

/** The partition table event: for each owner its partition ids, then the owners' UUIDs. */
export function encodePartitionsView(correlationId: bigint, version: number, owners: readonly { readonly uuid: Uuid; readonly partitions: readonly number[] }[]): Buffer {
  const w = MessageWriter.event(MESSAGE.PARTITIONS_VIEW_EVENT, correlationId, 4).setInt(0, version).begin();
  for (const o of owners) {
    const ids = Buffer.alloc(4 * o.partitions.length);
    for (let i = 0; i < o.partitions.length; i++) ids.writeInt32LE(o.partitions[i] as number, 4 * i);
    w.fixedFrame(ids);
  }
  w.end();
  const uuids = Buffer.alloc(UUID_BYTES * owners.length);
  for (let i = 0; i < owners.length; i++) writeUuid(uuids, UUID_BYTES * i, (owners[i] as { uuid: Uuid }).uuid);
  return w.fixedFrame(uuids).build();
}
