// Reads the members' log files for two things. Pure: log text and the incarnations in, findings out.
//
// 1. Evidence of a split brain, i.e. a member removed while it was still alive (cluster.md). The
//    robust criterion is the members' own words, any of:
//      - "left the cluster: …"            a member learned it had been cut off (it was alive);
//      - "split brain: cluster … merges into …"   two sides met and one merges;
//      - "removed <uuid> (no heartbeat)" or "took over as master …; removed <uuid>" where <uuid> is an
//        incarnation the nemesis had not killed (and that had not exited) at that moment.
//    Together with the schedule (a pause or partition at least as long as
//    grid.max.no.heartbeat.seconds is counted as a split brain even if no line shows it), this
//    decides which windows of the run were split brains.
// 2. Member errors: a stderr line naming an error or exception (Node prints uncaught exceptions and
//    unhandled rejections there, with their stack), or the SEVERE "unexpected failure in …" line (an
//    exception a request handler did not expect, answered 500). Other stderr lines (a Node warning)
//    are notes. Other SEVERE lines are counted, not errors: a minority side of a split logs
//    "partition N lost every replica" by design, and the data checks judge whether anything was lost.

export interface LogIncarnation {
  readonly uuid: string;
  readonly member: string;
  /** When the nemesis killed it, or when it exited; null while it lives. */
  readonly goneAtMs: number | null;
}

export interface Evidence {
  readonly atMs: number;
  readonly member: string;
  readonly kind: 'left' | 'merge' | 'removed-alive';
  readonly line: string;
}

export interface MemberError {
  readonly member: string;
  readonly line: string;
}

const LINE = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) (\w+)\s+(\S+) \[([\w-]+)\] (.*)$/;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

const STDERR_ERROR = /Error|Exception|Uncaught|Unhandled|fatal|^\[stderr\]\s+at /;

export function readMemberLog(
  member: string,
  text: string,
  incarnations: ReadonlyMap<string, LogIncarnation>,
): { evidence: Evidence[]; errors: MemberError[]; notes: MemberError[]; severe: number } {
  const evidence: Evidence[] = [];
  const errors: MemberError[] = [];
  const notes: MemberError[] = [];
  let severe = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('[stderr]')) {
      if (line.trim() === '[stderr]') continue;
      (STDERR_ERROR.test(line) ? errors : notes).push({ member, line });
      continue;
    }
    const m = LINE.exec(line);
    if (m === null) continue;
    const atMs = Date.parse(m[1] as string);
    const level = m[2] as string;
    const message = m[5] as string;
    if (level === 'SEVERE') {
      severe++;
      if (/^unexpected failure in /.test(message)) errors.push({ member, line });
    }
    if (/^left the cluster: /.test(message)) evidence.push({ atMs, member, kind: 'left', line });
    else if (/^split brain: cluster \S+ merges into /.test(message)) evidence.push({ atMs, member, kind: 'merge', line });
    else {
      const removed = /^removed (.+) \(no heartbeat\)$/.exec(message) ?? /^took over as master with \d+ member\(s\); removed (.+)$/.exec(message);
      if (removed === null) continue;
      for (const uuid of (removed[1] as string).match(UUID) ?? []) {
        const inc = incarnations.get(uuid);
        // An unknown uuid cannot be judged; only a known incarnation alive at that moment counts.
        if (inc !== undefined && (inc.goneAtMs === null || inc.goneAtMs > atMs)) {
          evidence.push({ atMs, member, kind: 'removed-alive', line });
          break;
        }
      }
    }
  }
  return { evidence, errors, notes, severe };
}
