// Serving an executor over A2A (JSON-RPC and HTTP+JSON on one port, SSE streams) with the
// Rust core's server.
import { cardFromSdk, fromSdkExecutor, isSdkExecutor } from './compat.js';
import { dispatcher, extensionMethods, profileChecks } from './executor.js';
import { call, json, native, settle } from './native.js';

// Listening servers, held strongly: like a net.Server's handle, a listening server must not be
// garbage collected (its native half would stop serving) just because user code dropped it.
const listening = new Set();

export class AgentServer {
  #native;
  #executor;

  /**
   * `card` is the agent card; when it declares no `supportedInterfaces`, the server's own
   * (JSON-RPC and HTTP+JSON at the bound address) are filled in. `options` (see
   * `AgentServerOptions` in index.d.ts): `store` ("memory", "sqlite:PATH" or a PostgreSQL URL;
   * several servers may share one database), `bearerTokens` (every request must then carry one:
   * an object maps each token to the principal it authenticates; an array of tokens: all are the
   * principal "bearer-token"), `extendedCard`, `limits`, and `security` (API keys, JWTs, TLS /
   * mutual TLS, scopes per operation, signing keys; the card declares each scheme, and any one
   * admits a caller). A task belongs to the principal that created it: other principals get
   * TaskNotFoundError.
   */
  constructor(card, executor, options = {}) {
    if (isSdkExecutor(executor)) {
      // An unchanged @a2a-js/sdk executor, and its card as the SDK types it (lib/compat.js).
      executor = fromSdkExecutor(executor);
      card = cardFromSdk(card);
    }
    if (!executor || typeof executor.execute !== 'function') {
      throw new TypeError('executor must be an object with an execute(context, events) method');
    }
    this.#executor = executor;
    // The executor's extension methods join the options; core checks them against the card.
    const methods = extensionMethods(executor);
    if (methods.length > 0) options = { ...options, methods };
    const profiles = profileChecks(executor);
    if (profiles.length > 0) options = { ...options, profileChecks: profiles };
    // Every option is read by core, strictly: a mistyped one is refused, naming it.
    this.#native = call(() => new native.AgentServer(json(card, 'card'), json(options ?? {}, 'options')));
  }

  /** Binds and serves in the background; resolves to the bound port (0 picks a free one). */
  async listen(port = 0, host = '127.0.0.1') {
    if (!Number.isInteger(port)) throw new TypeError(`port must be an integer from 0 to 65535, not ${typeof port === 'string' ? JSON.stringify(port) : String(port)}`);
    if (port < 0 || port > 65535) throw new RangeError(`port must be from 0 to 65535, not ${port}`);
    const bound = await settle(this.#native.listen(host, port, dispatcher(this.#executor)));
    listening.add(this);
    return bound;
  }

  /** Stops gracefully: open streams end, running requests finish, then running executions are
   * aborted. Afterwards the server keeps nothing of Node's alive. */
  async close() {
    try {
      await settle(this.#native.close());
    } finally {
      listening.delete(this);
    }
  }

  get listening() {
    return this.#native.port !== null;
  }

  /** The bound port (null when not listening). */
  get port() {
    return this.#native.port;
  }

  /** `http://host:port` (null when not listening). */
  get url() {
    return this.#native.url;
  }

  /** `http://host:port/metrics` (null when not listening or without `metricsAddress`). */
  get metricsUrl() {
    return this.#native.metricsUrl;
  }

  [Symbol.asyncDispose]() {
    return this.close();
  }
}
