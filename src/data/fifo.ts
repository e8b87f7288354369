// A first-in first-out ring buffer: O(1) push and shift at any size (Array.shift is O(n) on big
// arrays). Capacity is a power of two; it doubles when full and halves when three quarters empty,
// so a queue that drained gives its memory back.
// Invariants: `length` items live at [head, head + length) modulo capacity; other slots are undefined.
const CAPACITY_MIN = 16;

export class Fifo<T> {
  private slots: (T | undefined)[] = new Array<T | undefined>(CAPACITY_MIN);
  private head = 0;
  private length = 0;

  get size(): number {
    return this.length;
  }

  push(item: T): void {
    if (this.length === this.slots.length) this.resize(this.slots.length * 2);
    this.slots[(this.head + this.length) & (this.slots.length - 1)] = item;
    this.length++;
  }

  shift(): T | undefined {
    if (this.length === 0) return undefined;
    const item = this.slots[this.head];
    this.slots[this.head] = undefined;
    this.head = (this.head + 1) & (this.slots.length - 1);
    this.length--;
    if (this.slots.length > CAPACITY_MIN && this.length * 4 <= this.slots.length) this.resize(this.slots.length / 2);
    return item;
  }

  /** The item at position `i` from the head (0 = next to be shifted), or undefined. */
  at(i: number): T | undefined {
    if (i < 0 || i >= this.length) return undefined;
    return this.slots[(this.head + i) & (this.slots.length - 1)];
  }

  /** Removes every item; returns how many there were. */
  clear(): number {
    const removed = this.length;
    this.slots = new Array<T | undefined>(CAPACITY_MIN);
    this.head = 0;
    this.length = 0;
    return removed;
  }

  *[Symbol.iterator](): Generator<T> {
    for (let i = 0; i < this.length; i++) yield this.slots[(this.head + i) & (this.slots.length - 1)]!;
  }

  private resize(capacity: number): void {
    const slots = new Array<T | undefined>(capacity);
    for (let i = 0; i < this.length; i++) slots[i] = this.slots[(this.head + i) & (this.slots.length - 1)];
    this.slots = slots;
    this.head = 0;
  }
}
