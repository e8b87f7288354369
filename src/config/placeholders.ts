// `${NAME}` placeholders in XML text and attribute values. NAME is letters, digits, `_`, `.` and
// `-`; anything else after `${` (or no closing `}` nearby) is literal text, not a placeholder. There
// is no escape: a value cannot contain a literal `${NAME}`. One left-to-right pass, and a replacement
// is not scanned again, so a value cannot expand into further placeholders.

/** Longest NAME looked for; keeps the scan for `}` bounded. */
const NAME_LENGTH_MAX = 200;
const NAME = /^[A-Za-z0-9_.-]+$/;

export type Substituted = { readonly ok: true; readonly value: string } | { readonly ok: false; readonly name: string };

export function substitutePlaceholders(raw: string, lookup: (name: string) => string | undefined): Substituted {
  if (!raw.includes('${')) return { ok: true, value: raw };
  let out = '';
  let i = 0;
  for (;;) {
    const open = raw.indexOf('${', i);
    if (open < 0) break;
    const close = raw.slice(open + 2, open + 3 + NAME_LENGTH_MAX).indexOf('}');
    const name = close < 0 ? '' : raw.slice(open + 2, open + 2 + close);
    if (!NAME.test(name)) {
      out += raw.slice(i, open + 2);
      i = open + 2;
      continue;
    }
    const value = lookup(name);
    if (value === undefined) return { ok: false, name };
    out += raw.slice(i, open) + value;
    i = open + 3 + close;
  }
  return { ok: true, value: out + raw.slice(i) };
}
