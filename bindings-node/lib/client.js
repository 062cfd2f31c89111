// An A2A client on the Rust core: card resolution, JSON-RPC or HTTP+JSON (1.0, or 0.3 for
// agents that only speak it), streams as async iterables, credentials.
import { randomUUID } from 'node:crypto';
import { call, fromNative, json, keepFailure, native, settle } from './native.js';
import { callerTrace } from './trace.js';

/** A user message with a fresh id: a string becomes one text part. */
export function userMessage(content, { taskId, contextId } = {}) {
  const m = { messageId: randomUUID(), role: 'ROLE_USER', parts: typeof content === 'string' ? [{ text: content }] : content };
  if (taskId) m.taskId = taskId;
  if (contextId) m.contextId = contextId;
  return m;
}

const SEND_OPTIONS = new Set(['taskId', 'contextId', 'configuration', 'metadata', 'signal']);

/** `signal` checked: undefined, or an AbortSignal (whose reason is thrown if it fired already). */
function checkSignal(signal) {
  if (signal === undefined || signal === null) return undefined;
  if (!(signal instanceof AbortSignal)) throw new TypeError('signal must be an AbortSignal');
  signal.throwIfAborted();
  return signal;
}

/**
 * Runs `run(abort)`, a native call given `abort` (a native Abort, or undefined without a
 * signal). When `signal` fires, the native call ends at once (its request is dropped) and this
 * rejects with the signal's reason, as fetch does.
 */
async function abortable(signal, run) {
  if (!checkSignal(signal)) return run(undefined);
  const abort = new native.Abort();
  const onAbort = () => abort.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await run(abort);
  } catch (e) {
    throw signal.aborted ? signal.reason : e;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

function sendRequest(message, options = {}) {
  // A mistyped option (say `returnImmediately`, which belongs in `configuration`) is refused.
  for (const key of Object.keys(options ?? {})) {
    if (!SEND_OPTIONS.has(key)) {
      throw new TypeError(`unknown send option ${JSON.stringify(key)} (expected taskId, contextId, configuration or metadata)`);
    }
  }
  const { taskId, contextId, configuration, metadata } = options ?? {};
  if (typeof message === 'string') message = userMessage(message, { taskId, contextId });
  else if (message === null || typeof message !== 'object' || Array.isArray(message)) {
    throw new TypeError(`message must be a string, a Message or a SendMessageRequest object, got ${message === null ? 'null' : Array.isArray(message) ? 'an array' : typeof message}`);
  } else if ('message' in message) {
    // A whole SendMessageRequest carries its own options: given twice, one would be lost.
    const given = Object.keys(options ?? {}).filter((k) => k !== 'signal' && options[k] !== undefined);
    if (given.length) throw new TypeError(`a SendMessageRequest carries its own options; ${given.join(', ')} given beside it`);
    return message;
  } else {
    message = { ...message };
    if (taskId) message.taskId = taskId;
    if (contextId) message.contextId = contextId;
  }
  const req = { message };
  if (configuration) req.configuration = configuration;
  if (metadata) req.metadata = metadata;
  return req;
}

// Every option is read by core's ClientOptions, strictly: a mistyped one is refused, naming it.
// `credentials`, a function JSON cannot carry, goes beside them: `(method, url) => headers`
// (an object of strings, or a Promise of one), called before each request.
function nativeOptions(options) {
  // Not an object (`connect(url, 'JSONRPC')`): core refuses it, saying what options are.
  if (options !== undefined && options !== null && (typeof options !== 'object' || Array.isArray(options))) {
    return [json(options, 'options')];
  }
  const { credentials, ...rest } = options ?? {};
  if (credentials === undefined || credentials === null) return [json(rest, 'options')];
  if (typeof credentials !== 'function') throw new TypeError('credentials must be a function (method, url) => headers');
  // Always a Promise of JSON text, so the native side has one shape to read; a throw rejects it,
  // its error kept to become the `cause` of the call's InternalError (see `keepFailure`).
  const provide = async (method, url) => {
    try {
      return JSON.stringify((await credentials(method, url)) ?? {});
    } catch (e) {
      throw keepFailure(e);
    }
  };
  return [json(rest, 'options'), provide];
}

/**
 * The events of one stream (StreamResponse objects): `for await (const ev of stream)`. The
 * server ends it when the task ends; `close()` (or leaving the loop early) ends it now, and the
 * task goes on. The request is made on the first `next()`, so errors surface there. A `signal`
 * that fires closes it too, and the read then rejects with the signal's reason.
 */
export class EventStream {
  #open;
  #signal;
  // One request however many next() calls are waiting for it at once.
  #opening = null;
  #native = null;
  #done = false;
  // The settling of the last next() call still in flight (null when none is): a call made
  // before it settles waits its turn, so answers come in call order (an async iterator's
  // contract), never an early `done` or a later event first. A call with none in flight reads
  // at once.
  #tail = null;
  #onAbort = () => this.close();

  /** `open(abort)`: the native stream's Promise; `signal`, an AbortSignal or undefined. */
  constructor(open, signal) {
    this.#open = open;
    this.#signal = signal;
  }

  next() {
    const read = this.#tail === null ? this.#read() : this.#tail.then(() => this.#read());
    const tail = read.then(
      () => {},
      () => {},
    );
    this.#tail = tail;
    tail.then(() => {
      if (this.#tail === tail) this.#tail = null;
    });
    return read;
  }

  async #read() {
    if (this.#done) return { done: true, value: undefined };
    try {
      if (!this.#opening) {
        this.#opening = abortable(this.#signal, this.#open);
        this.#signal?.addEventListener('abort', this.#onAbort, { once: true });
      }
      this.#native ??= await this.#opening;
      const text = await this.#native.next();
      this.#signal?.throwIfAborted();
      if (text === null) {
        this.#finish();
        return { done: true, value: undefined };
      }
      return { done: false, value: JSON.parse(text) };
    } catch (e) {
      this.#finish();
      if (this.#signal?.aborted) {
        await this.close();
        throw this.#signal.reason;
      }
      throw fromNative(e);
    }
  }

  #finish() {
    this.#done = true;
    this.#signal?.removeEventListener('abort', this.#onAbort);
  }

  /** Ends the stream now (the task goes on). */
  async close() {
    this.#finish();
    // A stream still opening is closed once it is open.
    const native = this.#native ?? (await this.#opening?.catch(() => null));
    await native?.close();
  }

  async return() {
    await this.close();
    return { done: true, value: undefined };
  }

  [Symbol.asyncIterator]() {
    return this;
  }
}

/** A client of one agent: `await Client.connect(url)` or `Client.fromCard(card)`. Every call
 * rejects with an A2AError subclass on failure. */
export class Client {
  #native;
  #card;

  constructor(handle) {
    this.#native = handle;
  }

  /**
   * Resolves the agent card at `url` and picks an interface. Options (core's `ClientOptions`):
   * `bearerToken`, `apiKey: [headerName, value]`, `headers`, `timeout` (seconds), `binding`
   * ("JSONRPC" | "HTTP+JSON"), `retries`, `streamReconnects`, `allowV03`, `extensions`, ...;
   * and `credentials`, a function `(method, url) => headers` (or a Promise of them) called before
   * each request, for tokens that expire.
   */
  static async connect(url, options) {
    return new Client(await settle(native.Client.connect(String(url), ...nativeOptions(options))));
  }

  /** A client for an agent card, without network access. */
  static fromCard(card, options) {
    return new Client(call(() => native.Client.fromCard(json(card, 'card'), ...nativeOptions(options))));
  }

  get card() {
    return (this.#card ??= JSON.parse(this.#native.card));
  }
  get url() {
    return this.#native.url;
  }
  get binding() {
    return this.#native.binding;
  }
  get protocolVersion() {
    return this.#native.protocolVersion;
  }

  /** A unary operation by its A2A name; core validates the request and calls it. */
  async #unary(method, request, what, signal) {
    const body = json(request, what);
    const trace = callerTrace();
    const text = await abortable(signal, (abort) => settle(this.#native.call(method, body, trace, abort)));
    return JSON.parse(text);
  }

  /** The extensions the agent activated for the last `call`. */
  lastActivated = [];

  /** Calls an extension method the agent serves (JSON-RPC `method`; over HTTP+JSON `POST
   * {base}/{method}`), asking for `extensions` on this call beside the client's own. Resolves
   * to the result; `lastActivated` then holds the extensions the agent activated for it. */
  async call(method, params = null, { extensions = [], signal } = {}) {
    const body = json(params ?? null, 'params');
    const trace = callerTrace();
    const text = await abortable(signal, (abort) =>
      settle(this.#native.callMethod(String(method), body, [...extensions], trace, abort)));
    const { result, activated } = JSON.parse(text);
    this.lastActivated = activated;
    return result;
  }

  /** SendMessage: waits (unless `configuration.returnImmediately`) until the task is terminal or
   * interrupted; resolves to `{ task }` or `{ message }`. */
  async send(message, options) {
    return this.#unary('SendMessage', sendRequest(message, options), 'request', options?.signal);
  }

  /** SendStreamingMessage: `for await (const event of client.stream('hi'))`. A bad message or
   * option surfaces on the first `next()`, as every other error does. */
  stream(message, options) {
    const trace = callerTrace();
    return new EventStream((abort) =>
      settle(this.#native.stream('SendStreamingMessage', json(sendRequest(message, options), 'request'), trace, abort)),
    options?.signal);
  }

  /** SubscribeToTask: the task first, then its live events. */
  subscribe(taskId, { signal } = {}) {
    const trace = callerTrace();
    return new EventStream((abort) =>
      settle(this.#native.stream('SubscribeToTask', json({ id: taskId }, 'request'), trace, abort)), signal);
  }

  getTask(taskId, { historyLength, signal } = {}) {
    const req = { id: taskId };
    if (historyLength !== undefined) req.historyLength = historyLength;
    return this.#unary('GetTask', req, 'request', signal);
  }

  listTasks(request = {}, { signal } = {}) {
    return this.#unary('ListTasks', request, 'request', signal);
  }

  /** Every task ListTasks finds, page after page (`for await (const task of client.listAllTasks())`). */
  async *listAllTasks(request = {}) {
    // Core's pager: it follows nextPageToken, and stops if a server hands back the same one.
    const pager = call(() => this.#native.listAllTasks(json(request, 'request')));
    for (let text = await settle(pager.next()); text !== null; text = await settle(pager.next())) {
      yield JSON.parse(text);
    }
  }

  cancel(taskId, { metadata, signal } = {}) {
    const req = { id: taskId };
    if (metadata) req.metadata = metadata;
    return this.#unary('CancelTask', req, 'request', signal);
  }

  createPushConfig(config, { signal } = {}) {
    return this.#unary('CreateTaskPushNotificationConfig', config, 'config', signal);
  }

  getPushConfig(taskId, configId, { signal } = {}) {
    return this.#unary('GetTaskPushNotificationConfig', { taskId, id: configId }, 'request', signal);
  }

  /** One page of the task's push configs; `nextPageToken` (when not empty) asks for the next. */
  listPushConfigs(taskId, { pageSize, pageToken, signal } = {}) {
    const req = { taskId };
    if (pageSize !== undefined) req.pageSize = pageSize;
    if (pageToken) req.pageToken = pageToken;
    return this.#unary('ListTaskPushNotificationConfigs', req, 'request', signal);
  }

  async deletePushConfig(taskId, configId, { signal } = {}) {
    await this.#unary('DeleteTaskPushNotificationConfig', { taskId, id: configId }, 'request', signal);
  }

  async getExtendedCard({ signal } = {}) {
    return this.#unary('GetExtendedAgentCard', {}, 'request', signal);
  }
}
