// The one place grid-admin touches the network: one HTTP(S) exchange with node:http / node:https,
// a fresh connection per call (no agent, `Connection: close`), bounded by a deadline over the whole
// exchange and by a cap on the answer's size. It never throws: an answer or a TransportFailure.
import http from 'node:http';
import https from 'node:https';
import type { HttpRequestPlan } from './request.js';
import type { Exchange, Target } from './transport.js';

/** The management answers are small; a bigger one is not a Grid member's. */
export const ANSWER_BYTES_MAX = 16 * 1024 * 1024;

export function exchange(target: Target, plan: HttpRequestPlan): Promise<Exchange> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: Exchange): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const failed = (e: unknown, timedOut = false): void => {
      const err = e as NodeJS.ErrnoException;
      finish({ ok: false, failure: { code: typeof err.code === 'string' ? err.code : null, message: err.message, timedOut } });
    };
    const options: https.RequestOptions = {
      host: target.host,
      port: target.port,
      method: plan.method,
      path: plan.path,
      headers: plan.headers,
      agent: false,
    };
    if (target.tls !== null) {
      if (target.tls.ca !== null) options.ca = target.tls.ca;
      if (target.tls.cert !== null) options.cert = target.tls.cert;
      if (target.tls.key !== null) options.key = target.tls.key;
      options.rejectUnauthorized = target.tls.verify;
    }
    const onResponse = (res: http.IncomingMessage): void => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > ANSWER_BYTES_MAX) {
          req.destroy();
          failed(new Error(`answer larger than ${ANSWER_BYTES_MAX} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(res.headers)) {
          if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
        }
        finish({ ok: true, answer: { status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks).toString('utf8') } });
      });
      res.on('error', (e) => failed(e));
      res.on('aborted', () => failed(new Error('the connection closed before the whole answer arrived')));
    };
    const req = target.tls === null ? http.request(options, onResponse) : https.request(options, onResponse);
    const timer = setTimeout(() => {
      failed(new Error(`no complete answer within ${target.timeoutMs / 1000} s`), true);
      req.destroy();
    }, target.timeoutMs);
    req.on('error', (e) => failed(e));
    req.end(plan.body ?? undefined);
  });
}
