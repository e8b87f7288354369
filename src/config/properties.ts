// The `grid.*` properties the member understands: name, the GridProperties field it fills, default
// and allowed range (integers; booleans are `true` or `false`). One table serves the XML
// `<properties>`, GRID_PROPERTY_* variables, the printed configuration and the docs. An unknown
// `grid.*` name is an error (a typo would otherwise be silently ignored); other names are kept as
// raw properties for placeholders.
import { assert } from '../util/assert.js';
import type { GridProperties } from './types.js';
import { INT_MAX, parseBoolean, parseInteger, type Parsed } from './values.js';

type KeysOf<V> = { [K in keyof GridProperties]: GridProperties[K] extends V ? K : never }[keyof GridProperties];

export interface IntegerPropertySpec {
  readonly kind: 'integer';
  readonly name: string;
  readonly key: KeysOf<number>;
  readonly defaultValue: number;
  readonly min: number;
  readonly max: number;
}

export interface BooleanPropertySpec {
  readonly kind: 'boolean';
  readonly name: string;
  readonly key: KeysOf<boolean>;
  readonly defaultValue: boolean;
}

export type PropertySpec = IntegerPropertySpec | BooleanPropertySpec;

const int = (name: string, key: KeysOf<number>, defaultValue: number, min: number, max: number): IntegerPropertySpec => ({ kind: 'integer', name, key, defaultValue, min, max });

export const GRID_PROPERTY_SPECS: readonly PropertySpec[] = [
  int('grid.partition.count', 'partitionCount', 271, 1, 32768),
  int('grid.heartbeat.interval.seconds', 'heartbeatIntervalSeconds', 1, 1, 3600),
  int('grid.max.no.heartbeat.seconds', 'maxNoHeartbeatSeconds', 10, 1, 86400),
  // Refusal-based detection (cluster.md): faults are refused reconnects, counted when 3/4 of an interval apart or more.
  int('grid.connection.monitor.interval', 'connectionMonitorIntervalMs', 100, 10, 60000),
  int('grid.connection.monitor.max.faults', 'connectionMonitorMaxFaults', 3, 1, 1000),
  int('grid.operation.call.timeout.millis', 'operationCallTimeoutMs', 60000, 1, INT_MAX),
  // CP calls (spec/cp.md "Raft"): how long a call looks for its group's leader; how long invocation UUIDs are remembered.
  int('grid.cp.call.timeout.millis', 'cpCallTimeoutMs', 10000, 100, INT_MAX),
  int('grid.cp.invocation.dedupe.seconds', 'cpInvocationDedupeSeconds', 300, 1, 86400),
  int('grid.cp.leadership.rebalance.seconds', 'cpLeadershipRebalanceSeconds', 60, 1, 86400),
  int('grid.graceful.shutdown.max.wait.seconds', 'gracefulShutdownMaxWaitSeconds', 600, 0, 86400),
  int('grid.rest.header.bytes.max', 'restHeaderBytesMax', 16384, 1024, 1048576),
  int('grid.rest.body.bytes.max', 'restBodyBytesMax', 16777216, 0, 268435456),
  int('grid.rest.pipeline.max', 'restPipelineMax', 1000, 1, 100000),
  int('grid.rest.headers.timeout.seconds', 'restHeadersTimeoutSeconds', 60, 1, 86400),
  int('grid.rest.idle.timeout.seconds', 'restIdleTimeoutSeconds', 300, 1, 86400),
  int('grid.rest.connections.max', 'restConnectionsMax', 10000, 1, 1000000),
  int('grid.queue.poll.timeout.seconds.max', 'queuePollTimeoutSecondsMax', 300, 0, 86400),
  int('grid.queue.waiters.max', 'queueWaitersMax', 100000, 0, 10000000),
  int('grid.member.frame.bytes.max', 'memberFrameBytesMax', 67108864, 65536, 1073741824),
  int('grid.client.frame.bytes.max', 'clientFrameBytesMax', 16778240, 65536, 1073741824),
  int('grid.client.heartbeat.timeout.seconds', 'clientHeartbeatTimeoutSeconds', 60, 1, 86400),
  int('grid.client.connections.max', 'clientConnectionsMax', 10000, 1, 1000000),
  int('grid.shutdown.inflight.wait.seconds', 'shutdownInflightWaitSeconds', 20, 0, 3600),
  int('grid.socket.sniff.timeout.millis', 'sniffTimeoutMs', 10000, 1, 600000),
  { kind: 'boolean', name: 'grid.socket.bind.any', key: 'socketBindAny', defaultValue: true },
  { kind: 'boolean', name: 'grid.http.healthcheck.enabled', key: 'httpHealthcheckEnabled', defaultValue: false },
  // Plain HTTP connections read into one shared buffer (docs/rest.md, src/runtime/shared-reads.ts).
  { kind: 'boolean', name: 'grid.rest.read.buffer.shared', key: 'restReadBufferShared', defaultValue: true },
];

export function findPropertySpec(name: string): PropertySpec | undefined {
  return GRID_PROPERTY_SPECS.find((p) => p.name === name);
}

export function isGridPropertyName(name: string): boolean {
  return name.startsWith('grid.');
}

export function defaultGridProperties(): { -readonly [K in keyof GridProperties]: GridProperties[K] } {
  const out = {} as { -readonly [K in keyof GridProperties]: GridProperties[K] };
  for (const p of GRID_PROPERTY_SPECS) setProperty(out, p, p.defaultValue);
  return out;
}

/** Parses a property's text by its kind: `expected ...` on a bad value. */
export function parsePropertyValue(spec: PropertySpec, raw: string): Parsed<number | boolean> {
  return spec.kind === 'integer' ? parseInteger(raw, spec.min, spec.max) : parseBoolean(raw);
}

/** Stores a parsed value in its field; the value's type follows the spec's kind (asserted: parse with parsePropertyValue first). */
export function setProperty(target: { -readonly [K in keyof GridProperties]: GridProperties[K] }, spec: PropertySpec, value: number | boolean): void {
  if (spec.kind === 'integer') {
    assert(typeof value === 'number', `property ${spec.name} takes an integer`);
    target[spec.key] = value;
  } else {
    assert(typeof value === 'boolean', `property ${spec.name} takes a boolean`);
    target[spec.key] = value;
  }
}
