// What the admin core asks of the network, as types only: where to send one request and what came
// back. http-client.ts implements it with node:http / node:https; unit tests pass a fake.
import type { HttpAnswer, TransportFailure } from './answer.js';
import type { HttpRequestPlan } from './request.js';

export interface TlsOptions {
  readonly ca: Buffer | null;
  readonly cert: Buffer | null;
  readonly key: Buffer | null;
  /** False only with --insecure. */
  readonly verify: boolean;
}

export interface Target {
  readonly host: string;
  readonly port: number;
  /** null for plain HTTP. */
  readonly tls: TlsOptions | null;
  readonly timeoutMs: number;
}

export type Exchange = { readonly ok: true; readonly answer: HttpAnswer } | { readonly ok: false; readonly failure: TransportFailure };

export type ExchangeFn = (target: Target, plan: HttpRequestPlan) => Promise<Exchange>;
