// The polls waiting on one queue, first come first served. A doubly linked list gives O(1) append
// and take-first; a Map from waiter to its node gives O(1) cancel (a timeout or a closed
// connection), so tens of thousands of waiters are cheap to add, cancel and serve in any order.
// Invariants: `nodes` holds exactly the waiters on the list; a waiter is on the list at most once.
export class WaiterList<W> {
  private readonly nodes = new Map<W, WaiterNode<W>>();
  private head: WaiterNode<W> | null = null;
  private tail: WaiterNode<W> | null = null;

  get size(): number {
    return this.nodes.size;
  }

  has(waiter: W): boolean {
    return this.nodes.has(waiter);
  }

  /** Appends a waiter; false when it is already waiting here. */
  add(waiter: W): boolean {
    if (this.nodes.has(waiter)) return false;
    const node: WaiterNode<W> = { waiter, prev: this.tail, next: null };
    if (this.tail === null) this.head = node;
    else this.tail.next = node;
    this.tail = node;
    this.nodes.set(waiter, node);
    return true;
  }

  /** Removes a waiter wherever it is; false when it was not waiting here. */
  remove(waiter: W): boolean {
    const node = this.nodes.get(waiter);
    if (node === undefined) return false;
    this.unlink(node);
    return true;
  }

  /** Removes and returns the longest-waiting waiter, or null. */
  shift(): W | null {
    const node = this.head;
    if (node === null) return null;
    this.unlink(node);
    return node.waiter;
  }

  /** Removes every waiter; returns them in arrival order. */
  drain(): W[] {
    const waiters: W[] = [];
    for (let node = this.head; node !== null; node = node.next) waiters.push(node.waiter);
    this.nodes.clear();
    this.head = null;
    this.tail = null;
    return waiters;
  }

  private unlink(node: WaiterNode<W>): void {
    if (node.prev === null) this.head = node.next;
    else node.prev.next = node.next;
    if (node.next === null) this.tail = node.prev;
    else node.next.prev = node.prev;
    node.prev = null;
    node.next = null;
    this.nodes.delete(node.waiter);
  }
}

interface WaiterNode<W> {
  readonly waiter: W;
  prev: WaiterNode<W> | null;
  next: WaiterNode<W> | null;
}
