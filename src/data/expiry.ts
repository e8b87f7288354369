// When a map entry expires. `time-to-live-seconds` counts from the last update; `max-idle-seconds`
// from the last access, where a put and a get both count as access. 0 switches either off. An
// expired entry reads as absent; the store removes it when it meets it (get, put, remove, eviction
// sampling) or when the sweep passes. A clock that steps backwards never expires anything early.
import type { MapConfig } from '../config/types.js';

export interface ExpiryPolicy {
  /** 0 = entries never expire by age. */
  readonly ttlMs: number;
  /** 0 = entries never expire by idleness. */
  readonly maxIdleMs: number;
}

export function expiryPolicyOf(config: MapConfig): ExpiryPolicy {
  return { ttlMs: Math.max(0, config.timeToLiveSeconds) * 1000, maxIdleMs: Math.max(0, config.maxIdleSeconds) * 1000 };
}

export function expiryEnabled(policy: ExpiryPolicy): boolean {
  return policy.ttlMs > 0 || policy.maxIdleMs > 0;
}

export function isExpired(policy: ExpiryPolicy, updateTimeMs: number, lastAccessTimeMs: number, nowMs: number): boolean {
  return (
    (policy.ttlMs > 0 && nowMs - updateTimeMs >= policy.ttlMs) ||
    (policy.maxIdleMs > 0 && nowMs - lastAccessTimeMs >= policy.maxIdleMs)
  );
}

/**
 * When an entry with these times expires (wall-clock ms), or Infinity when the map never expires
 * it: the earlier of last update + TTL and last access + max-idle. Merge policies compare it.
 */
export function expirationTimeMs(policy: ExpiryPolicy, updateTimeMs: number, lastAccessTimeMs: number): number {
  let at = Infinity;
  if (policy.ttlMs > 0) at = updateTimeMs + policy.ttlMs;
  if (policy.maxIdleMs > 0) at = Math.min(at, lastAccessTimeMs + policy.maxIdleMs);
  return at;
}
