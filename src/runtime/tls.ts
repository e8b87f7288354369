// TLS for a port whose configuration says `ssl enabled="true"`: such a port speaks TLS only. The
// listener hands every new raw connection here before reading anything from it (node's TLS then
// works on the socket's handle natively), and gets the decrypted socket back to sniff (HTTP or the
// member protocol). Key, certificate and CA files are read at start-up and again on SIGHUP.
import fs from 'node:fs';
import path from 'node:path';
import tls, { type TLSSocket } from 'node:tls';
import type { Socket } from 'node:net';
import type { SslConfig } from '../config/types.js';
import type { ComponentLogger } from '../util/logger.js';

/** A TLS handshake must finish this soon after the ClientHello. */
const HANDSHAKE_TIMEOUT_MS = 10_000;

export function tlsOptions(ssl: SslConfig, cwd: string): tls.TlsOptions {
  const read = (file: string): Buffer => fs.readFileSync(path.resolve(cwd, file));
  const options: tls.TlsOptions = {
    key: read(ssl.keyFile),
    cert: read(ssl.certFile),
    requestCert: ssl.clientAuth !== 'none',
    rejectUnauthorized: ssl.clientAuth === 'required',
    handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
    minVersion: 'TLSv1.2',
  };
  if (ssl.caFile !== '') options.ca = read(ssl.caFile);
  return options;
}

/**
 * Options for dialling another member on a TLS-only member port. This member presents its own key and
 * certificate (so peers requiring client certificates accept it) and verifies the peer the standard
 * way: the chain must lead to `ca-file` when one is configured, else to Node's default roots or to
 * this member's own certificate (members sharing one self-signed certificate), and the certificate
 * must name the host dialled (an IP address in subjectAltName when members are addressed by IP).
 */
export function tlsClientOptions(ssl: SslConfig, cwd: string): tls.ConnectionOptions {
  const read = (file: string): Buffer => fs.readFileSync(path.resolve(cwd, file));
  const cert = read(ssl.certFile);
  return {
    key: read(ssl.keyFile),
    cert,
    ca: ssl.caFile !== '' ? read(ssl.caFile) : [...tls.rootCertificates, cert.toString('latin1')],
    rejectUnauthorized: true,
    minVersion: 'TLSv1.2',
  };
}

export class TlsTerminator {
  private readonly server: tls.Server;
  readonly counters = { handshakesFailed: 0 };

  constructor(options: tls.TlsOptions, onSecure: (socket: TLSSocket) => void, log: ComponentLogger) {
    this.server = tls.createServer(options, onSecure);
    this.server.on('tlsClientError', (error: Error, socket: TLSSocket) => {
      this.counters.handshakesFailed++;
      log.fine(`TLS handshake from ${socket.remoteAddress ?? '?'} failed: ${error.message}`);
      socket.destroy();
    });
  }

  /** Replaces key, certificate and CA for new handshakes. */
  reload(options: tls.TlsOptions): void {
    this.server.setSecureContext(options);
  }

  /** Starts TLS on a raw connection from which nothing has been read (TLS takes over its handle). */
  accept(socket: Socket): void {
    this.server.emit('connection', socket);
  }
}
