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
