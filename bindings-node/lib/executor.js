// The seam an agent fills: an object with `async execute(context, events)` (and optionally
// `async cancel(context, events)`). `events` reports through the native sink; returning ends the
// work; a thrown error or rejected promise fails the task with its message; a cancel fires
// `context.signal`.
import { fromNative, json, native } from './native.js';
import * as errorClasses from '../errors.js';
import { withRequestContext } from './trace.js';

/** A name of one of the A2A error classes (errors.js): sent back as that error. */
function isA2AErrorName(name) {
  return typeof name === 'string' && name !== 'A2AError' && typeof errorClasses[name] === 'function';
}

/** The A2A error class `e` is an instance of (or, with `byName`, names in `e.name`), else `''`.
 * Never throws: a revoked Proxy or a throwing getter gives `''`. */
function errorNameOf(e, byName) {
  try {
    if (e instanceof Error && typeof e.constructor?.errorName === 'string') return e.constructor.errorName;
    return byName && typeof e?.name === 'string' ? e.name : '';
  } catch {
    return '';
  }
}

const DONE = Promise.resolve();

/** A send's refusal. A late event (the task ended, say by a cancel, while a timer of the agent
 * still reports) is a race an agent cannot always avoid: awaited, it rejects as any refusal;
 * not awaited, it is dropped instead of ending the process as an unhandled rejection (as
 * @a2a-js/sdk's server drops it). Other refusals (a malformed event) are the agent's bug and
 * stay loud. */
function refused(error) {
  const rejected = Promise.reject(error);
  if (error instanceof errorClasses.UnsupportedOperationError) rejected.catch(() => {});
  return rejected;
}

/** One execution's cancellation. The AbortController is made only when `signal` is read: most
 * executors never look, and making one per request is measurable on the hot path. */
class Cancellation {
  #controller = null;
  #reason = undefined;

  get signal() {
    if (this.#controller === null) {
      this.#controller = new AbortController();
      if (this.#reason !== undefined) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  abort(reason) {
    if (this.#controller !== null) this.#controller.abort(reason);
    else this.#reason ??= reason;
  }
}

/** What an executor knows about the call it serves. */
export class RequestContext {
  #cancellation;

  constructor(fields, cancellation) {
    this.taskId = fields.taskId;
    this.contextId = fields.contextId;
    /** The client's message (null for cancel). */
    this.message = fields.message ?? null;
    /** The task this message continues, the message already in its history (null for a new task). */
    this.task = fields.task ?? null;
    this.configuration = fields.configuration ?? null;
    this.metadata = fields.metadata ?? null;
    this.tenant = fields.tenant ?? '';
    /** The authenticated caller ({name, scopes}; null when anonymous). The task belongs to it. */
    this.principal = fields.principal ?? null;
    /** Extension URIs the client asked for that the agent declares. */
    this.extensions = fields.extensions ?? [];
    /** Ids of the card's skills this caller may use (per-skill scopes), in card order. */
    this.skills = fields.skills ?? [];
    /** The W3C trace context this work continues ({traceparent, tracestate}, the caller's as
     * received; {} without one). With @opentelemetry/api, `execute` already runs in it, so
     * the agent's spans join the caller's trace. */
    this.traceContext = fields.traceContext ?? {};
    this.#cancellation = cancellation;
  }

  /** Aborted when the task is canceled (or the server closes). */
  get signal() {
    return this.#cancellation.signal;
  }

  /** The client's message, as @a2a-js/sdk names it. */
  get userMessage() {
    return this.message;
  }

  /** The text parts of the client's message, joined by newlines. */
  get text() {
    const parts = this.message?.parts ?? [];
    return parts.filter((p) => typeof p.text === 'string').map((p) => p.text).join('\n');
  }
}


/** `[text, messageJson]` for the sink: a string is one agent text part. */
function messageArgs(message) {
  if (message === undefined || message === null) return [null, null];
  if (typeof message === 'string') return [message, null];
  // Core makes a message without role or messageId the agent's, with a fresh id.
  return [null, json(message, 'message')];
}

/** How an executor reports. Every method returns a promise; awaiting it is the backpressure. */
export class EventQueue {
  #call;

  /** `call`: the native call id this queue reports for (see src/executor.rs). */
  constructor(call, taskId, contextId) {
    this.#call = call;
    this.taskId = taskId;
    this.contextId = contextId;
  }

  /** Sends now when the sink has room (a settled promise); waits for room when it is full. */
  #deliver(send) {
    try {
      if (send(this.#call)) return DONE;
      return native.sinkFlush(this.#call).then(undefined, (e) => refused(fromNative(e)));
    } catch (e) {
      return refused(fromNative(e));
    }
  }

  /** Marks the extension `uri` activated for this request: it is echoed in the response's
   * `A2A-Extensions` (in a blocking SendMessage's answer; a stream's headers leave before the
   * executor runs). Only one of `context.extensions` (asked for by the client, declared by the
   * card) can be; returns whether `uri` is. */
  activateExtension(uri) {
    return native.sinkActivate(this.#call, String(uri));
  }

  /** A new status (`"working"` or `"TASK_STATE_WORKING"`), with an optional message. */
  status(state, message) {
    return this.#deliver((call) => {
      const [text, messageJson] = messageArgs(message);
      return native.sinkStatus(call, String(state), text, messageJson);
    });
  }

  working(message) {
    return this.status('TASK_STATE_WORKING', message);
  }
  complete(message) {
    return this.status('TASK_STATE_COMPLETED', message);
  }
  fail(message) {
    return this.status('TASK_STATE_FAILED', message);
  }
  reject(message) {
    return this.status('TASK_STATE_REJECTED', message);
  }
  inputRequired(message) {
    return this.status('TASK_STATE_INPUT_REQUIRED', message);
  }
  authRequired(message) {
    return this.status('TASK_STATE_AUTH_REQUIRED', message);
  }
  canceled(message) {
    return this.status('TASK_STATE_CANCELED', message);
  }

  /** An artifact of `parts` (a string is one text part); a fresh id unless `artifactId` is
   * given. With `append`, more parts for an earlier artifact with the same id. */
  artifact(parts, { artifactId, name, description, append = false, lastChunk = false, metadata } = {}) {
    return this.#deliver((call) => {
      const artifact = {
        // Without an id, core gives the artifact a fresh one.
        ...(artifactId ? { artifactId } : {}),
        parts: typeof parts === 'string' ? [{ text: parts }] : parts,
      };
      if (name) artifact.name = name;
      if (description) artifact.description = description;
      if (metadata) artifact.metadata = metadata;
      return native.sinkArtifact(call, json(artifact, 'artifact'), Boolean(append), Boolean(lastChunk));
    });
  }

  /** A direct reply instead of a task (only as the first and only event). */
  message(message) {
    return this.#deliver((call) => {
      const [text, messageJson] = messageArgs(message);
      return native.sinkMessage(call, text, messageJson);
    });
  }

  /** Any event, as a StreamResponse (ids left out are this task's). */
  send(event) {
    return this.#deliver((call) => native.sinkSend(call, json(event, 'event')));
  }
}

/** The message a failed task carries. Total: whatever was thrown (an object without a
 * prototype, an Error whose message is not a string) gives a string. */
function failure(e) {
  try {
    if (e instanceof Error) {
      if (typeof e.message === 'string' && e.message) return e.message;
      if (typeof e.name === 'string' && e.name) return e.name;
      return 'Error';
    }
    return String(e);
  } catch {
    // A revoked Proxy, a throwing getter or toString: the outcome must still be reported.
    return 'the executor failed with a value that has no string form';
  }
}

/** The extension methods an executor declares: `executor.methods`, an object of
 * `name -> { extension, path?, handler: async (params, context) => result }`. */
export function extensionMethods(executor) {
  const declared = executor?.methods;
  if (declared === undefined || declared === null) return [];
  if (typeof declared !== 'object') throw new TypeError('executor.methods must be an object of name -> { extension, handler }');
  return Object.entries(declared).map(([name, spec]) => {
    if (typeof spec?.handler !== 'function') throw new TypeError(`executor.methods[${JSON.stringify(name)}].handler must be a function`);
    const { extension, path } = spec;
    return { name, extension, ...(path === undefined ? {} : { path }) };
  });
}

/** Runs an extension method's handler; the outcome goes to `native.finishMethod`. Its
 * `context.signal` is aborted when the caller leaves before the answer. */
async function callMethod(executor, callId, viewJson, cancellation) {
  let result;
  try {
    const view = JSON.parse(viewJson);
    const context = {
      method: view.method,
      extension: view.extension,
      tenant: view.tenant,
      principal: view.principal ?? null,
      extensions: view.extensions,
      traceContext: view.traceContext ?? {},
      get signal() {
        return cancellation.signal;
      },
    };
    result = await executor.methods[view.method].handler.call(executor, view.params ?? null, context);
  } catch (e) {
    const name = errorNameOf(e, true);
    native.finishMethod(callId, null, isA2AErrorName(name) ? name : 'InternalError', failure(e));
    return;
  }
  let json;
  try {
    json = result === undefined ? null : JSON.stringify(result);
  } catch (e) {
    native.finishMethod(callId, null, 'InternalError', `the method's result is not JSON: ${failure(e)}`);
    return;
  }
  native.finishMethod(callId, json, null, null);
}

/** The profile extensions an executor checks: `executor.profiles`, an object of
 * `extension URI -> (message) => void | Promise<void>` (throwing refuses the message). */
export function profileChecks(executor) {
  const declared = executor?.profiles;
  if (declared === undefined || declared === null) return [];
  if (typeof declared !== 'object') throw new TypeError('executor.profiles must be an object of extension URI -> check(message)');
  return Object.entries(declared).map(([uri, check]) => {
    if (typeof check !== 'function') throw new TypeError(`executor.profiles[${JSON.stringify(uri)}] must be a function`);
    return uri;
  });
}

/** Runs a profile check; a throw refuses the message (InvalidParams naming the rule, unless it
 * is an A2AError of another kind). The outcome goes to `native.finishMethod`. */
async function checkMessage(executor, callId, viewJson) {
  try {
    const view = JSON.parse(viewJson);
    await executor.profiles[view.extension].call(executor, view.message);
  } catch (e) {
    const name = errorNameOf(e, false);
    native.finishMethod(callId, null, isA2AErrorName(name) ? name : 'InvalidParamsError', failure(e));
    return;
  }
  native.finishMethod(callId, null, null, null);
}

/** The function the native server calls for every execute / cancel / abort (src/executor.rs).
 * It returns at once; the outcome goes to `native.finishCall(callId, failure, errorName)`: null
 * when the executor is done, or the failure's message (and an A2AError's name). It never
 * throws, whatever the executor does. */
export function dispatcher(executor) {
  const running = new Map(); // callId -> Cancellation of an execute or an extension method
  async function run(callId, method, contextJson, cancellation) {
    try {
      const fields = JSON.parse(contextJson);
      const context = new RequestContext(fields, cancellation);
      const events = new EventQueue(callId, fields.taskId, fields.contextId);
      // In the request's OpenTelemetry context: the agent's own spans join the caller's trace.
      await withRequestContext(context.traceContext, () => {
        if (method === 'execute') return executor.execute(context, events);
        if (typeof executor.cancel === 'function') return executor.cancel(context, events);
        return undefined;
      });
      return [null, null];
    } catch (e) {
      // An A2AError's name goes with it: raised before the first event, it refuses the request
      // (core decides; InternalError never does).
      const name = errorNameOf(e, false);
      return [failure(e), isA2AErrorName(name) ? name : null];
    } finally {
      running.delete(callId);
    }
  }
  return function dispatch(callId, method, contextJson) {
    if (method === 'method') {
      const cancellation = new Cancellation();
      running.set(callId, cancellation);
      callMethod(executor, callId, contextJson, cancellation).finally(() => running.delete(callId));
      return;
    }
    if (method === 'check') {
      checkMessage(executor, callId, contextJson);
      return;
    }
    if (method === 'abort' || method === 'timeout') {
      // The reason is the server's closing, or (none given) the task's cancel; or the execution
      // ran past its time limit: a TimeoutError, as `AbortSignal.timeout` gives.
      const name = method === 'timeout' ? 'TimeoutError' : 'AbortError';
      running.get(callId)?.abort(new DOMException(contextJson || 'the task was canceled', name));
      return;
    }
    const cancellation = new Cancellation();
    if (method === 'execute') running.set(callId, cancellation);
    // `run` does not reject; the second handler makes sure that a call always ends.
    run(callId, method, contextJson, cancellation).then(
      ([outcome, name]) => native.finishCall(callId, outcome, name),
      () => native.finishCall(callId, 'the executor failed', null),
    );
  };
}
