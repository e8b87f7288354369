// What every screen is to the page: a root element carrying data-screen, its panels (for staleness)
// and a refresh that fetches and redraws.
import type { Panel } from './panel.js';
import type { Session } from './api.js';

export interface Screen {
  readonly root: HTMLElement;
  readonly panels: readonly Panel[];
  refresh(): Promise<void>;
  dispose?(): void;
}

export interface Ctx {
  readonly session: Session;
  /** The refresh period in ms, 0 when paused. */
  periodMs(): number;
  /** Redraws the current screen now (after an action). */
  refreshNow(): void;
}

/** Runs the refresh of panels drawn from the same answers: all fresh, or all failed with the message (their old data stays). */
export async function guarded(panels: Panel | readonly Panel[], work: () => Promise<void>): Promise<boolean> {
  const all = Array.isArray(panels) ? panels : [panels as Panel];
  try {
    await work();
    for (const p of all) p.ok();
    return true;
  } catch (e) {
    for (const p of all) p.failed(e instanceof Error ? e.message : String(e));
    return false;
  }
}
