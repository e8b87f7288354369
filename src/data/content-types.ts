// Interned content types with reference counts, shared by every map of a member. A record stores a
// small integer id instead of its own string, so a million "text/plain" records hold one string.
// Invariants: id 0 means "no content type" and is never counted; every other live id has refs >= 1
// and is freed (its id reused) the moment its last record lets go, so the table is bounded by the
// number of distinct types in use, not by the number ever seen.
import { assert } from '../util/assert.js';

export const NO_CONTENT_TYPE = 0;

export class ContentTypes {
  private readonly idsByName = new Map<string, number>();
  private readonly names: (string | null)[] = [null];
  private readonly refs: number[] = [0];
  private readonly freeIds: number[] = [];

  /** Takes one reference to `name` and returns its id. */
  acquire(name: string | null): number {
    if (name === null) return NO_CONTENT_TYPE;
    let id = this.idsByName.get(name);
    if (id === undefined) {
      id = this.freeIds.pop() ?? this.names.length;
      this.names[id] = name;
      this.refs[id] = 0;
      this.idsByName.set(name, id);
    }
    this.refs[id]!++;
    return id;
  }

  /** Drops one reference; the last one frees the id. */
  release(id: number): void {
    if (id === NO_CONTENT_TYPE) return;
    const refs = this.refs[id];
    assert(refs !== undefined && refs > 0, 'content type released more often than acquired');
    this.refs[id] = refs - 1;
    if (refs > 1) return;
    this.idsByName.delete(this.names[id]!);
    this.names[id] = null;
    this.freeIds.push(id);
  }

  name(id: number): string | null {
    return this.names[id] ?? null;
  }

  /** How many distinct content types records hold now. */
  get distinctCount(): number {
    return this.idsByName.size;
  }
}
