// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of every persisted log record
// and metadata file. Slicing by 8: eight 256-entry tables, eight bytes per step, then byte by byte.
// Check value: crc32c("123456789") = 0xE3069283.

const POLY = 0x82f63b78;
const TABLES: Int32Array[] = buildTables();

function buildTables(): Int32Array[] {
  const t0 = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
    t0[n] = c;
  }
  const tables = [t0];
  for (let i = 1; i < 8; i++) {
    const prev = tables[i - 1] as Int32Array;
    const t = new Int32Array(256);
    for (let n = 0; n < 256; n++) {
      const p = prev[n] as number;
      t[n] = (p >>> 8) ^ (t0[p & 0xff] as number);
    }
    tables.push(t);
  }
  return tables;
}

const [T0, T1, T2, T3, T4, T5, T6, T7] = TABLES as [Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array];

/**
 * The CRC-32C of `bytes[start, end)`, as an unsigned 32-bit number. `previous` continues an earlier
 * checksum (the value it returned), so a record can be checked in pieces.
 */
export function crc32c(bytes: Uint8Array, start = 0, end = bytes.length, previous = 0): number {
  let c = ~previous;
  let i = start;
  const stop8 = end - ((end - start) & 7);
  while (i < stop8) {
    const lo = c ^ ((bytes[i] as number) | ((bytes[i + 1] as number) << 8) | ((bytes[i + 2] as number) << 16) | ((bytes[i + 3] as number) << 24));
    c =
      (T7[lo & 0xff] as number) ^
      (T6[(lo >>> 8) & 0xff] as number) ^
      (T5[(lo >>> 16) & 0xff] as number) ^
      (T4[lo >>> 24] as number) ^
      (T3[bytes[i + 4] as number] as number) ^
      (T2[bytes[i + 5] as number] as number) ^
      (T1[bytes[i + 6] as number] as number) ^
      (T0[bytes[i + 7] as number] as number);
    i += 8;
  }
  while (i < end) c = (c >>> 8) ^ (T0[(c ^ (bytes[i++] as number)) & 0xff] as number);
  return ~c >>> 0;
}
