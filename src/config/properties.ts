// The `grid.*` properties the member understands: name, the GridProperties field it fills, default
// and allowed range. One table serves the XML `<properties>`, GRID_PROPERTY_* variables, the
// printed configuration and the docs. An unknown `grid.*` name is an error (a typo would otherwise be
// silently ignored); other names are kept as raw properties for placeholders.
import type { GridProperties } from './types.js';
import { INT_MAX } from './values.js';

export interface PropertySpec {
  readonly name: string;
  readonly key: keyof GridProperties;
  readonly defaultValue: number;
  readonly min: number;
  readonly max: number;
}

export const GRID_PROPERTY_SPECS: readonly PropertySpec[] = [
  { name: 'grid.partition.count', key: 'partitionCount', defaultValue: 271, min: 1, max: 32768 },
  { name: 'grid.heartbeat.interval.seconds', key: 'heartbeatIntervalSeconds', defaultValue: 1, min: 1, max: 3600 },
  { name: 'grid.max.no.heartbeat.seconds', key: 'maxNoHeartbeatSeconds', defaultValue: 10, min: 1, max: 86400 },
  { name: 'grid.operation.call.timeout.millis', key: 'operationCallTimeoutMs', defaultValue: 60000, min: 1, max: INT_MAX },
  { name: 'grid.graceful.shutdown.max.wait.seconds', key: 'gracefulShutdownMaxWaitSeconds', defaultValue: 600, min: 0, max: 86400 },
  { name: 'grid.rest.header.bytes.max', key: 'restHeaderBytesMax', defaultValue: 16384, min: 1024, max: 1048576 },
  { name: 'grid.rest.body.bytes.max', key: 'restBodyBytesMax', defaultValue: 16777216, min: 0, max: 268435456 },
  { name: 'grid.rest.pipeline.max', key: 'restPipelineMax', defaultValue: 1000, min: 1, max: 100000 },
  { name: 'grid.rest.headers.timeout.seconds', key: 'restHeadersTimeoutSeconds', defaultValue: 60, min: 1, max: 86400 },
  { name: 'grid.rest.idle.timeout.seconds', key: 'restIdleTimeoutSeconds', defaultValue: 300, min: 1, max: 86400 },
  { name: 'grid.rest.connections.max', key: 'restConnectionsMax', defaultValue: 10000, min: 1, max: 1000000 },
  { name: 'grid.queue.poll.timeout.seconds.max', key: 'queuePollTimeoutSecondsMax', defaultValue: 300, min: 0, max: 86400 },
  { name: 'grid.queue.waiters.max', key: 'queueWaitersMax', defaultValue: 100000, min: 0, max: 10000000 },
  { name: 'grid.member.frame.bytes.max', key: 'memberFrameBytesMax', defaultValue: 67108864, min: 65536, max: 1073741824 },
  { name: 'grid.shutdown.inflight.wait.seconds', key: 'shutdownInflightWaitSeconds', defaultValue: 30, min: 0, max: 3600 },
  { name: 'grid.socket.sniff.timeout.millis', key: 'sniffTimeoutMs', defaultValue: 10000, min: 1, max: 600000 },
];

export function findPropertySpec(name: string): PropertySpec | undefined {
  return GRID_PROPERTY_SPECS.find((p) => p.name === name);
}

export function isGridPropertyName(name: string): boolean {
  return name.startsWith('grid.');
}

export function defaultGridProperties(): Record<keyof GridProperties, number> {
  const out = {} as Record<keyof GridProperties, number>;
  for (const p of GRID_PROPERTY_SPECS) out[p.key] = p.defaultValue;
  return out;
}
