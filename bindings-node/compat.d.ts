// Running an unchanged @a2a-js/sdk (1.x) AgentExecutor on a2a-native (lib/compat.js). An
// AgentServer takes such an executor, and the SDK's AgentCard, directly; these are for the rest.
import type { AgentExecutor } from './index.js';

/** The SDK's executor shape: `execute(requestContext, eventBus)` and `cancelTask(taskId, eventBus)`. */
export interface SdkAgentExecutor {
  execute(requestContext: any, eventBus: any): Promise<void>;
  cancelTask(taskId: string, eventBus: any): Promise<void>;
}

export interface FromSdkOptions {
  /** Seconds one execute / cancelTask may run; past it the task ends FAILED. Unlimited by default. */
  executorTimeout?: number;
}

/** Our executor around an @a2a-js/sdk one, which runs unchanged. */
export function fromSdkExecutor(executor: SdkAgentExecutor, options?: FromSdkOptions): AgentExecutor;
/** Whether `executor` has the SDK's shape (`execute` and `cancelTask`, no `cancel`). */
export function isSdkExecutor(executor: unknown): executor is SdkAgentExecutor;
/** The SDK's AgentCard object as our ProtoJSON card. */
export function cardFromSdk(card: unknown): Record<string, unknown>;
/** Our model (ProtoJSON) as the SDK's object of `typeName` ("Task", "Message", "StreamResponse", ...). */
export function toSdk(typeName: string, value: unknown): any;
/** The SDK's object of `typeName` as our model (ProtoJSON). */
export function fromSdk(typeName: string, value: unknown): any;
