// How figures read on the page: bytes in binary units, durations, rates, times of day.
export function bytes(n: number): string {
  if (!Number.isFinite(n)) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v.toFixed(0) : v.toFixed(1)} ${units[i]}`;
}

export function duration(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const sec = ms / 1000;
  if (sec < 60) return `${sec.toFixed(1)} s`;
  const min = Math.floor(sec / 60);
  if (min < 60) return `${min} min ${Math.floor(sec % 60)} s`;
  const hours = Math.floor(min / 60);
  if (hours < 48) return `${hours} h ${min % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

export function count(n: number): string {
  if (!Number.isFinite(n)) return '–';
  return Math.round(n).toLocaleString('en-US');
}

export function rate(n: number): string {
  if (!Number.isFinite(n)) return '–';
  return n >= 100 ? `${Math.round(n).toLocaleString('en-US')}/s` : `${n.toFixed(1)}/s`;
}

export function clock(timeMs: number): string {
  const d = new Date(timeMs);
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

export function dateTime(timeMs: number): string {
  const d = new Date(timeMs);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')} ${clock(timeMs)}`;
}

/** A UUID's first 8 characters, as the page names members in tight places. */
export function shortId(uuid: string): string {
  return uuid.slice(0, 8);
}
