// The member's node states and the cluster states, as the health and management calls name them
// (rest.md §6, §7). A module of their own so that the facade (member-api.ts) and the metrics
// snapshot can both name them without importing each other; the cluster states are the cluster
// room's (cluster/cluster-state.ts).
export type NodeState = 'STARTING' | 'ACTIVE' | 'PASSIVE' | 'SHUTTING_DOWN' | 'SHUT_DOWN';
export type { ClusterState } from '../cluster/cluster-state.js';
