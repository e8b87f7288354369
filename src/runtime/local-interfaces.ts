// The machine's addresses as the address choice (config/bind-address.ts) reads them: the
// runtime's side of a pure function, since only runtime/ may ask the operating system.
import os from 'node:os';
import type { LocalInterface } from '../config/bind-address.js';

/** Every address of every interface, in the order os.networkInterfaces() lists them. */
export function localInterfaces(): LocalInterface[] {
  const out: LocalInterface[] = [];
  for (const [name, addresses] of Object.entries(os.networkInterfaces())) {
    for (const a of addresses ?? []) {
      // Node 18.0-18.3 reported the family as a number; 20+ as a string.
      const family = String(a.family) === '4' || a.family === 'IPv4' ? 'IPv4' : 'IPv6';
      out.push({ name, address: a.address, family, internal: a.internal, cidr: a.cidr ?? null });
    }
  }
  return out;
}
