// Versions a member reports: its own (major.minor.patch) and the cluster version (major.minor).
export const PRODUCT_NAME = 'Grid';
export const MEMBER_VERSION = '0.1.0';
export const CLUSTER_VERSION = '0.1';
