// Runs an unchanged @a2a-js/sdk (1.x) AgentExecutor on our server: `execute(requestContext,
// eventBus)` gets the SDK's own RequestContext (its request, taskId, contextId, task and a
// ServerCallContext with the caller, tenant and requested extensions), and an ExecutionEventBus
// whose `publish` hands each event to core (converted with the SDK's own ProtoJSON codecs, so
// nothing is lost). `cancelTask(taskId, eventBus)` is called on CancelTask.
//
// A foreign executor that throws, publishes something that is not an A2A event (even if it
// catches the TypeError), or outlives `executorTimeout` seconds (when given) ends its task FAILED
// with a message saying so. The SDK is an optional peer dependency, loaded on first use.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let sdk = null;

/** The SDK's models and server classes (its CommonJS build: loaded synchronously). */
function load() {
  if (sdk === null) {
    try {
      sdk = { models: require('@a2a-js/sdk'), server: require('@a2a-js/sdk/server') };
    } catch (e) {
      throw new Error(`running an @a2a-js/sdk executor needs the SDK: npm install @a2a-js/sdk (${e.message})`);
    }
  }
  return sdk;
}

/** An @a2a-js/sdk executor: `execute` and `cancelTask` (ours has `cancel`). */
export function isSdkExecutor(executor) {
  return (
    executor !== null &&
    typeof executor === 'object' &&
    typeof executor.execute === 'function' &&
    typeof executor.cancelTask === 'function' &&
    typeof executor.cancel !== 'function'
  );
}

/** An SDK AgentCard object (as its types write it: oneofs as `{$case, value}`) as our ProtoJSON
 * card; a card already in ProtoJSON form (a security scheme without `scheme`) as it is. */
export function cardFromSdk(card) {
  const schemes = Object.values(card?.securitySchemes ?? {});
  if (!schemes.every((s) => s !== null && typeof s === 'object' && 'scheme' in s)) return card;
  return load().models.AgentCard.toJSON(card);
}

/** Our model (ProtoJSON) as the SDK's object of `typeName` ("Task", "Message", ...). */
export function toSdk(typeName, value) {
  return codec(typeName).fromJSON(value);
}

/** The SDK's object of `typeName` as our model (ProtoJSON). */
export function fromSdk(typeName, value) {
  return codec(typeName).toJSON(value);
}

function codec(typeName) {
  const fns = load().models[typeName];
  if (typeof fns?.fromJSON !== 'function') throw new TypeError(`no A2A model named ${typeName}`);
  return fns;
}

// The StreamResponse member and codec of each AgentEvent kind.
const KINDS = {
  task: ['task', 'Task'],
  message: ['message', 'Message'],
  statusUpdate: ['statusUpdate', 'TaskStatusUpdateEvent'],
  artifactUpdate: ['artifactUpdate', 'TaskArtifactUpdateEvent'],
};

/** The SDK's ExecutionEventBus over our EventQueue. `publish` is synchronous in the SDK: sends
 * are chained in order, and `settled()` waits for them. */
class EventBus {
  #events;
  #chain = Promise.resolve();
  #listeners = { event: new Set(), finished: new Set() };
  #echo;
  /** The first failure: a non-event, or a send core refused. */
  failure = null;

  /** `echo`: on a continued task, the task the executor was given. The SDK has an executor
   * publish a task first on every turn, mostly that one unchanged; core has the task already
   * (with the new message), so that first echo is not sent as a new snapshot. */
  #callContext;

  constructor(events, echo, callContext) {
    this.#events = events;
    this.#echo = echo;
    this.#callContext = callContext;
  }

  /** The SDK's executors activate with `context.addActivatedExtension(uri)`: passed on before
   * each event, so a blocking answer (sent at the final event) carries them. */
  syncActivated() {
    for (const uri of this.#callContext?.activatedExtensions ?? []) this.#events.activateExtension(uri);
  }

  /** An update's ids, where the executor left them empty (the SDK's `cancelTask` knows only the
   * task id, so its samples publish `contextId: ''`): this task's. */
  #withIds(data) {
    const { taskId, contextId } = this.#events;
    return { ...data, taskId: data.taskId || taskId, contextId: data.contextId || contextId };
  }

  publish(event) {
    this.syncActivated();
    const echo = this.#echo;
    this.#echo = undefined;
    if (echo && event?.kind === 'task' && event.data?.id === echo.id && event.data?.status?.state === echo.status?.state) {
      for (const listener of this.#listeners.event) listener(event);
      return;
    }
    const kind = KINDS[event?.kind];
    if (kind === undefined || event.data === null || typeof event.data !== 'object') {
      const what = event?.kind ?? (event === null ? 'null' : typeof event);
      this.failure ??= `the @a2a-js/sdk executor published ${JSON.stringify(what)}, not a task, message, statusUpdate or artifactUpdate event`;
      throw new TypeError(this.failure);
    }
    const [member, model] = kind;
    const data = member === 'statusUpdate' || member === 'artifactUpdate' ? this.#withIds(event.data) : event.data;
    const value = { [member]: fromSdk(model, data) };
    this.#chain = this.#chain.then(() =>
      this.failure === null
        ? this.#events.send(value).catch((e) => {
            this.failure ??= e.message;
          })
        : undefined,
    );
    for (const listener of this.#listeners.event) listener(event);
  }

  finished() {
    for (const listener of this.#listeners.finished) listener();
  }

  on(name, listener) {
    this.#listeners[name]?.add(listener);
    return this;
  }
  once(name, listener) {
    const once = (...args) => {
      this.off(name, once);
      listener(...args);
    };
    return this.on(name, once);
  }
  off(name, listener) {
    this.#listeners[name]?.delete(listener);
    return this;
  }
  removeAllListeners(name) {
    for (const [key, set] of Object.entries(this.#listeners)) if (name === undefined || name === key) set.clear();
    return this;
  }

  async settled() {
    await this.#chain;
    if (this.failure !== null) throw new Error(this.failure);
  }
}

/** The SDK's User for our principal. */
class Principal {
  constructor({ name, scopes }) {
    this.userName = name;
    this.scopes = scopes;
  }
  get isAuthenticated() {
    return true;
  }
}

function callContext(context) {
  const { server } = load();
  return new server.ServerCallContext({
    tenant: context.tenant,
    user: context.principal ? new Principal(context.principal) : new server.UnauthenticatedUser(),
    requestedExtensions: [...context.extensions],
    requestedVersion: '1.0',
    state: new Map([
      ['traceContext', context.traceContext],
      ['skills', context.skills],
    ]),
  });
}

/** Our executor around an @a2a-js/sdk one, which runs unchanged. */
export function fromSdkExecutor(executor, { executorTimeout } = {}) {
  async function run(method, events, call, echo, callContext) {
    const bus = new EventBus(events, echo, callContext);
    let timer;
    const limit =
      executorTimeout == null
        ? null
        : new Promise((_, reject) => {
            timer = setTimeout(
              () => reject(new Error(`the @a2a-js/sdk executor's ${method} did not return within ${executorTimeout} s`)),
              executorTimeout * 1000,
            );
          });
    try {
      const work = Promise.resolve().then(() => call(bus));
      // Past the time limit the executor runs on unobserved: its late failure is not a crash.
      work.catch(() => {});
      await (limit ? Promise.race([work, limit]) : work);
    } finally {
      clearTimeout(timer);
    }
    await bus.settled();
  }
  return {
    sdkExecutor: executor,
    execute(context, events) {
      const { models, server } = load();
      const request = models.SendMessageRequest.fromJSON({
        message: context.message,
        configuration: context.configuration ?? undefined,
        metadata: context.metadata ?? undefined,
        tenant: context.tenant,
      });
      // As the SDK's server gives it: with the incoming message already in its history.
      const task = context.task ? models.Task.fromJSON(context.task) : undefined;
      const call = callContext(context);
      const requestContext = new server.RequestContext(request, context.taskId, context.contextId, call, task);
      return run(
        'execute',
        events,
        async (bus) => {
          try {
            await executor.execute(requestContext, bus);
          } finally {
            bus.syncActivated();
          }
        },
        task,
        call,
      );
    },
    cancel(context, events) {
      return run('cancelTask', events, (bus) => executor.cancelTask(context.taskId, bus));
    },
  };
}
