// A panel of a screen: a titled section that knows when its data last arrived. Data older than two
// refresh periods is marked stale (`data-stale`, and a note saying since when); an error keeps the
// last data on screen, marked, rather than blanking it (spec/console.md "Freshness").
import { fill, h } from './dom.js';
import { clock } from './format.js';

export class Panel {
  readonly el: HTMLElement;
  readonly body: HTMLElement;
  private readonly note: HTMLElement;
  private updatedAtMs = 0;
  private problem: string | null = null;

  constructor(title: string, attrs: Readonly<Record<string, string>> = {}) {
    const id = `p-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
    this.note = h('p', { class: 'panel-note', role: 'status' });
    this.body = h('div', { class: 'panel-body' });
    this.el = h('section', { class: 'panel', 'aria-labelledby': id, ...attrs }, h('h2', { id }, title), this.note, this.body);
  }

  /** New data is on screen. */
  ok(nowMs: number = Date.now()): void {
    this.updatedAtMs = nowMs;
    this.problem = null;
    this.el.removeAttribute('data-stale');
    fill(this.note);
  }

  /** The refresh failed: the last data stays, marked. */
  failed(message: string): void {
    this.problem = message;
    fill(this.note, h('span', { class: 'error' }, message));
  }

  get lastUpdatedMs(): number {
    return this.updatedAtMs;
  }

  /** Marks the panel stale when its data is older than two periods (never while paused, 0). */
  checkStale(periodMs: number, nowMs: number = Date.now()): void {
    if (periodMs <= 0 || this.updatedAtMs === 0) return;
    const stale = nowMs - this.updatedAtMs > 2 * periodMs;
    if (stale === this.el.hasAttribute('data-stale')) return;
    if (stale) {
      this.el.setAttribute('data-stale', '');
      fill(this.note, h('span', { class: 'stale' }, `stale: last updated ${clock(this.updatedAtMs)}`), this.problem === null ? null : h('span', { class: 'error' }, ` (${this.problem})`));
    } else {
      this.el.removeAttribute('data-stale');
    }
  }
}

/** "k of n members answered" and who did not: a missing member is never shown as zero. */
export function answeredNote(a: { readonly answered: number; readonly of: number; readonly missing: readonly string[] }, nameOf: (uuid: string) => string): HTMLElement {
  const all = a.answered >= a.of;
  return h(
    'p',
    { class: all ? 'answered' : 'answered partial', 'data-answered': `${a.answered}/${a.of}` },
    `${a.answered} of ${a.of} members answered`,
    all ? '' : `; no answer from ${a.missing.map(nameOf).join(', ')}`,
  );
}
