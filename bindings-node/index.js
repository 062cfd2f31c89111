// a2a-native: the Agent2Agent (A2A) protocol for Node.js, on one Rust core.
//
// - AgentServer: serves an executor ({ async execute(context, events), async cancel?(...) })
// - Client: talks to any A2A agent (send, stream, subscribe, tasks, push configs)
// - A2AError and one subclass per spec error (generated: errors.js)
// - models.d.ts: the A2A 1.0 types (ProtoJSON, generated from the spec)
import { call, json, native } from './lib/native.js';

export { AgentServer } from './lib/server.js';
export { Client, EventStream, userMessage } from './lib/client.js';
export { EventQueue, RequestContext } from './lib/executor.js';
export * from './errors.js';

/** The native module's version. */
export const version = native.version();

/** The level of the core's log events on standard error: 'error', 'warn' (the default),
 *  'info', 'debug', 'trace' or 'off'. InvalidParamsError for another name. */
export function setLogLevel(level) {
  call(() => native.setLogLevel(String(level)));
}

/** Reads `value` as the A2A 1.0 model `typeName` and returns its canonical ProtoJSON form;
 * throws InvalidParamsError naming the offending field. */
export function normalize(typeName, value) {
  return JSON.parse(call(() => native.normalize(String(typeName), json(value, 'value'))));
}

/** Converts a value of the 0.3 wire form to A2A 1.0 (`typeName` as core's v03::TYPE_NAMES). */
export function v03ToV10(typeName, value) {
  return JSON.parse(call(() => native.v03ToV10(String(typeName), json(value, 'value'))));
}

/** Converts an A2A 1.0 value to the 0.3 wire form. */
export function v10ToV03(typeName, value) {
  return JSON.parse(call(() => native.v10ToV03(String(typeName), json(value, 'value'))));
}

/** Whether a task may move from `from` (null: a task being created) to `to`. */
export function canTransition(from, to) {
  return call(() => native.canTransition(from ?? null, String(to)));
}

/** "terminal", "interrupted", "active" or "unspecified". */
export function stateClass(state) {
  return call(() => native.stateClass(String(state)));
}

/** Core's error table (one row per spec error). */
export function errorTable() {
  return native.errorTable();
}

/** The RFC 8785 (JCS) canonical JSON text of a value (as signed Agent Cards use). */
export function canonicalize(value) {
  return call(() => native.canonicalize(json(value, 'value')));
}

/** `card` with one more signature (a detached JWS over its canonical form) made with the PEM
 * private key; `alg` is "ES256", "RS256" or "EdDSA". */
export function signCard(card, pem, { alg, kid, jku } = {}) {
  return JSON.parse(call(() => native.signCard(json(card, 'card'), String(pem), String(alg), String(kid), jku ?? null)));
}

/** The kid of a signature of `card` that verifies under the JWKS; throws UnauthenticatedError
 * when none does. */
export function verifyCard(card, jwks, algorithms = ['ES256', 'RS256', 'EdDSA']) {
  return call(() => native.verifyCard(json(card, 'card'), json(jwks, 'jwks'), algorithms.map(String)));
}

/** Checks signed push notifications where your webhook receives them: signature (the agent's
 * JWKS), audience (your webhook URL), issuer, freshness, body hash, replay, and the config's
 * token. `verify(headers, body)` returns `{taskId, jti, issuedAt}` or throws
 * UnauthenticatedError naming the failed check. */
export class PushVerifier {
  #native;

  /** `options`: `{issuer, token, maxAge}`, `maxAge` in seconds (default 300); unknown keys
   * are refused. */
  constructor(jwks, audience, options = {}) {
    this.#native = call(() => new native.PushVerifier(json({ ...options, jwks, audience }, 'options')));
  }

  verify(headers, body) {
    const pairs = Array.isArray(headers) ? headers : Object.entries(headers);
    const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
    return JSON.parse(call(() => this.#native.verify(pairs.map(([k, v]) => [String(k), String(v)]), bytes)));
  }
}
