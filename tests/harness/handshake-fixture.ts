// A valid handshake request from a compatible member of cluster `dev`, for tests to vary.
import type { HandshakeRequest } from '../../src/cluster/protocol/handshake.js';

export function sampleHandshake(overrides: Partial<HandshakeRequest> = {}): HandshakeRequest {
  return {
    protocolVersionMin: 1,
    protocolVersionMax: 1,
    clusterName: 'dev',
    memberUuid: '0f8fad5b-d9cb-469f-a165-70867728950e',
    memberVersion: '0.1.0',
    partitionCount: 271,
    addresses: [{ host: '127.0.0.1', port: 5701 }],
    identity: null,
    ...overrides,
  };
}
