// An A2A client on the Rust core: card resolution, JSON-RPC or HTTP+JSON (1.0, or 0.3 for
// agents that only speak it), streams as async iterables, credentials.
import { randomUUID } from 'node:crypto';
import { call, fromNative, json, native, settle } from './native.js';
import { callerTrace } from './trace.js';

/** A user message with a fresh id: a string becomes one text part. */
export function userMessage(content, { taskId, contextId } = {}) {
  const m = { messageId: randomUUID(), role: 'ROLE_USER', parts: typeof content === 'string' ? [{ text: content }] : content };
  if (taskId) m.taskId = taskId;
  if (contextId) m.contextId = contextId;
  return m;
}

const SEND_OPTIONS = new Set(['taskId', 'contextId', 'configuration', 'metadata']);

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
    const given = Object.keys(options ?? {}).filter((k) => options[k] !== undefined);
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
  // Always a Promise of JSON text, so the native side has one shape to read; a throw rejects it.
  const provide = async (method, url) => JSON.stringify((await credentials(method, url)) ?? {});
  return [json(rest, 'options'), provide];
}

/**
 * The events of one stream (StreamResponse objects): `for await (const ev of stream)`. The
 * server ends it when the task ends; `close()` (or leaving the loop early) ends it now, and the
 * task goes on. The request is made on the first `next()`, so errors surface there.
 */
export class EventStream {
  #open;
  // One request however many next() calls are waiting for it at once.
  #opening = null;
  #native = null;
  #done = false;

  constructor(open) {
    this.#open = open;
  }

  async next() {
    if (this.#done) return { done: true, value: undefined };
    try {
      this.#opening ??= this.#open();
      this.#native ??= await this.#opening;
      const text = await this.#native.next();
      if (text === null) {
        this.#done = true;
        return { done: true, value: undefined };
      }
      return { done: false, value: JSON.parse(text) };
    } catch (e) {
      this.#done = true;
      throw fromNative(e);
    }
  }

  /** Ends the stream now (the task goes on). */
  async close() {
    this.#done = true;
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
  async #unary(method, request, what) {
    const text = await settle(this.#native.call(method, json(request, what), callerTrace()));
    return JSON.parse(text);
  }

  /** The extensions the agent activated for the last `call`. */
  lastActivated = [];

  /** Calls an extension method the agent serves (JSON-RPC `method`; over HTTP+JSON `POST
   * {base}/{method}`), asking for `extensions` on this call beside the client's own. Resolves
   * to the result; `lastActivated` then holds the extensions the agent activated for it. */
  async call(method, params = null, { extensions = [] } = {}) {
    const text = await settle(this.#native.callMethod(String(method), json(params ?? null, 'params'), [...extensions], callerTrace()));
    const { result, activated } = JSON.parse(text);
    this.lastActivated = activated;
    return result;
  }

  /** SendMessage: waits (unless `configuration.returnImmediately`) until the task is terminal or
   * interrupted; resolves to `{ task }` or `{ message }`. */
  async send(message, options) {
    return this.#unary('SendMessage', sendRequest(message, options), 'request');
  }

  /** SendStreamingMessage: `for await (const event of client.stream('hi'))`. A bad message or
   * option surfaces on the first `next()`, as every other error does. */
  stream(message, options) {
    const trace = callerTrace();
    return new EventStream(() =>
      settle(this.#native.stream('SendStreamingMessage', json(sendRequest(message, options), 'request'), trace)));
  }

  /** SubscribeToTask: the task first, then its live events. */
  subscribe(taskId) {
    const trace = callerTrace();
    return new EventStream(() => settle(this.#native.stream('SubscribeToTask', json({ id: taskId }, 'request'), trace)));
  }

  getTask(taskId, { historyLength } = {}) {
    const req = { id: taskId };
    if (historyLength !== undefined) req.historyLength = historyLength;
    return this.#unary('GetTask', req, 'request');
  }

  listTasks(request = {}) {
    return this.#unary('ListTasks', request, 'request');
  }

  /** Every task ListTasks finds, page after page (`for await (const task of client.listAllTasks())`). */
  async *listAllTasks(request = {}) {
    // Core's pager: it follows nextPageToken, and stops if a server hands back the same one.
    const pager = call(() => this.#native.listAllTasks(json(request, 'request')));
    for (let text = await settle(pager.next()); text !== null; text = await settle(pager.next())) {
      yield JSON.parse(text);
    }
  }

  cancel(taskId, { metadata } = {}) {
    const req = { id: taskId };
    if (metadata) req.metadata = metadata;
    return this.#unary('CancelTask', req, 'request');
  }

  createPushConfig(config) {
    return this.#unary('CreateTaskPushNotificationConfig', config, 'config');
  }

  getPushConfig(taskId, configId) {
    return this.#unary('GetTaskPushNotificationConfig', { taskId, id: configId }, 'request');
  }

  listPushConfigs(taskId) {
    return this.#unary('ListTaskPushNotificationConfigs', { taskId }, 'request');
  }

  async deletePushConfig(taskId, configId) {
    await this.#unary('DeleteTaskPushNotificationConfig', { taskId, id: configId }, 'request');
  }

  async getExtendedCard() {
    return this.#unary('GetExtendedAgentCard', {}, 'request');
  }
}
