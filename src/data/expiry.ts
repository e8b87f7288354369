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

/**
 * A record's own expiry, set by a write that names one (the client protocol's put with a TTL or a
 * max-idle): for each of the two, -1 (ENTRY_EXPIRY_MAP) = the map's setting, 0 = never, > 0 = that
 * many milliseconds. A write that names none gives the record the map's settings again, as in the
 * reference.
 */
export interface EntryExpiry {
  readonly ttlMs: number;
  readonly maxIdleMs: number;
}

export const ENTRY_EXPIRY_MAP = -1;
/** Both from the map (what every REST write and every plain client write stores). */
export const MAP_EXPIRY: EntryExpiry = Object.freeze({ ttlMs: ENTRY_EXPIRY_MAP, maxIdleMs: ENTRY_EXPIRY_MAP });

export function isMapExpiry(e: EntryExpiry): boolean {
  return e.ttlMs === ENTRY_EXPIRY_MAP && e.maxIdleMs === ENTRY_EXPIRY_MAP;
}

/** The policy that applies to a record: the map's, with the record's own settings over it. */
export function entryPolicy(map: ExpiryPolicy, ttlMs: number, maxIdleMs: number): ExpiryPolicy {
  if (ttlMs === ENTRY_EXPIRY_MAP && maxIdleMs === ENTRY_EXPIRY_MAP) return map;
  return { ttlMs: ttlMs === ENTRY_EXPIRY_MAP ? map.ttlMs : ttlMs, maxIdleMs: maxIdleMs === ENTRY_EXPIRY_MAP ? map.maxIdleMs : maxIdleMs };
}

/**
 * A record keeps each of its two settings in one u32 word: 0 = the map's, 0xFFFFFFFF = never,
 * below 2^31 = milliseconds, 2^31 + n = n seconds (a setting of 24.8 days or more is kept to the
 * second, rounded up; at most about 68 years).
 */
const WORD_NEVER = 0xffffffff;
const WORD_SECONDS = 0x80000000;
const SECONDS_MAX = 0x7ffffffe;

export function expiryWord(ms: number): number {
  if (ms === ENTRY_EXPIRY_MAP) return 0;
  if (ms === 0) return WORD_NEVER;
  if (ms < WORD_SECONDS) return Math.max(1, Math.ceil(ms));
  return (WORD_SECONDS + Math.min(SECONDS_MAX, Math.ceil(ms / 1000))) >>> 0;
}

export function expiryOfWord(word: number): number {
  if (word === 0) return ENTRY_EXPIRY_MAP;
  if (word === WORD_NEVER) return 0;
  if (word < WORD_SECONDS) return word;
  return (word - WORD_SECONDS) * 1000;
}

/**
 * A setting as a write may name it, made one the store keeps: anything negative is the map's (-1),
 * 0 is never, a fraction of a millisecond rounds up, and anything past 2^53 ms (a Java client's
 * Long.MAX_VALUE) is never.
 */
export function normalizedExpiryMs(ms: number): number {
  if (Number.isNaN(ms) || ms < 0) return ENTRY_EXPIRY_MAP;
  if (ms === 0 || ms > Number.MAX_SAFE_INTEGER) return 0;
  return Math.ceil(ms);
}
