// The cluster states (rest.md §7, cluster.md "Cluster states") and their codes on the wire
// (membersView.clusterState, stateLock, stateCommit, recoveryDone). IN_TRANSITION is not a state a
// member is in: it is what a member reports while a two-phase change holds its lock.
export type ClusterState = 'ACTIVE' | 'NO_MIGRATION' | 'FROZEN' | 'PASSIVE' | 'IN_TRANSITION';
/** The states a cluster can be put in (and is in between changes). */
export type RequestableClusterState = Exclude<ClusterState, 'IN_TRANSITION'>;

export const STATE_CODES: Readonly<Record<RequestableClusterState, number>> = { ACTIVE: 0, NO_MIGRATION: 1, FROZEN: 2, PASSIVE: 3 };
export const STATE_BY_CODE: readonly RequestableClusterState[] = ['ACTIVE', 'NO_MIGRATION', 'FROZEN', 'PASSIVE'];
