// JSON with 64-bit integers and bytes tagged (`{"$big":"…"}`, `{"$b64":"…"}`), so CP answers keep
// their types across the wire (call-wire.ts) and in snapshots (structures.ts). Decoding checks what
// it turns back into a bigint.

/** JSON with bigint and bytes tagged, so answers and queries keep their types across the wire. */
export function packJson(v: unknown): Buffer {
  return Buffer.from(
    JSON.stringify(v, function (this: Record<string, unknown>, k: string, x: unknown) {
      const own = this[k];
      if (typeof own === 'bigint') return { $big: own.toString() };
      if (own instanceof Uint8Array) return { $b64: Buffer.from(own).toString('base64') };
      return x;
    }),
  );
}

export function unpackJson(b: Uint8Array): unknown {
  return JSON.parse(Buffer.from(b).toString('utf8'), (_k, v: unknown) => {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const o = v as Record<string, unknown>;
      if (typeof o.$big === 'string' && Object.keys(o).length === 1) {
        if (!/^-?\d{1,20}$/.test(o.$big)) throw new Error(`not a 64-bit integer: ${o.$big.slice(0, 40)}`);
        return BigInt(o.$big);
      }
      if (typeof o.$b64 === 'string' && Object.keys(o).length === 1) return Buffer.from(o.$b64, 'base64');
    }
    return v;
  });
}
