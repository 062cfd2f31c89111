// a2a-native: the Agent2Agent (A2A) protocol for Node.js, on one Rust core. Hand-written
// declarations of the public API (index.js, lib/); the models (models.d.ts) and the error
// classes (errors.d.ts) are generated.
import type {
  AgentCard,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  Part,
  SendMessageConfiguration,
  SendMessageRequest,
  SendMessageResponse,
  StreamResponse,
  Task,
  TaskArtifactUpdateEvent,
  TaskPushNotificationConfig,
  TaskState,
  TaskStatusUpdateEvent,
} from './models.js';
import type { ErrorRow } from './native.js';

export * from './errors.js';
export type * from './models.js';

/** A state by its ProtoJSON name or its short form (`"working"`, `"input-required"`). */
export type StateName =
  | TaskState
  | 'submitted'
  | 'working'
  | 'completed'
  | 'failed'
  | 'canceled'
  | 'input-required'
  | 'rejected'
  | 'auth-required';

/** ListTasks as a client writes it: `status` by either name (`'input-required'`). */
export type ListTasksQuery = Omit<ListTasksRequest, 'status'> & { status?: StateName };

/** A message from the agent: a string is one text part; ids and role may be left out. */
export type AgentMessage = string | (Omit<Message, 'messageId' | 'role'> & Partial<Pick<Message, 'messageId' | 'role'>>);

/** What an executor knows about the call it serves. */
export declare class RequestContext {
  readonly taskId: string;
  readonly contextId: string;
  /** The client's message (null for cancel). */
  readonly message: Message | null;
  /** The client's message, as @a2a-js/sdk names it. */
  readonly userMessage: Message | null;
  /** The task this message continues, the message already in its history (null for a new task). */
  readonly task: Task | null;
  readonly configuration: SendMessageConfiguration | null;
  readonly metadata: { [key: string]: unknown } | null;
  readonly tenant: string;
  /** The authenticated caller (null when anonymous); the task belongs to it. */
  readonly principal: { readonly name: string; readonly scopes: string[] } | null;
  /** Extension URIs the client asked for that the agent declares. */
  readonly extensions: string[];
  /**
   * Ids of the card's skills the caller may use, in card order: skills without
   * `securityRequirements` and those whose scopes the caller holds (a message names no skill).
   */
  readonly skills: string[];
  /** The W3C trace context this work continues (`traceparent`, `tracestate`, and `baggage`: the
   * caller's as received; empty without one), to extract with @opentelemetry/api's propagator. */
  readonly traceContext: { readonly traceparent?: string; readonly tracestate?: string; readonly baggage?: string };
  /** Aborted when the task is canceled or the server closes (`reason`: an `AbortError`
   * DOMException), or when the execution runs past `limits.executorTimeout` (a `TimeoutError`). */
  readonly signal: AbortSignal;
  /** The text parts of the client's message, joined by newlines. */
  readonly text: string;
}

/** The context `execute` gets (a type only: at run time a RequestContext): the client's message is always there. */
export interface ExecuteContext extends RequestContext {
  readonly message: Message;
  readonly userMessage: Message;
}

export interface ArtifactOptions {
  /** Defaults to a fresh UUID; give it to append to an earlier artifact. */
  artifactId?: string;
  name?: string;
  description?: string;
  append?: boolean;
  lastChunk?: boolean;
  metadata?: { [key: string]: unknown };
}

/** How an executor reports. Every method returns a promise: it is settled at once when the
 * event is sent, and waits for room when the task's event queue is full (backpressure). */
export declare class EventQueue {
  /** Marks an extension of `context.extensions` activated for this request (echoed in the
   * response's A2A-Extensions); whether `uri` is one that can be. */
  activateExtension(uri: string): boolean;
  readonly taskId: string;
  readonly contextId: string;
  status(state: StateName, message?: AgentMessage): Promise<void>;
  working(message?: AgentMessage): Promise<void>;
  complete(message?: AgentMessage): Promise<void>;
  fail(message?: AgentMessage): Promise<void>;
  reject(message?: AgentMessage): Promise<void>;
  inputRequired(message?: AgentMessage): Promise<void>;
  authRequired(message?: AgentMessage): Promise<void>;
  canceled(message?: AgentMessage): Promise<void>;
  /** An artifact of `parts` (a string is one text part). */
  artifact(parts: string | Part[], options?: ArtifactOptions): Promise<void>;
  /** A direct reply instead of a task (only as the first and only event). */
  message(message: AgentMessage): Promise<void>;
  /** Any event (ids left out are this task's). */
  send(event: AgentEvent): Promise<void>;
}

/** `T` with its task and context ids optional: the sink fills in this task's. */
type IdsOptional<T, Ids extends keyof T> = Omit<T, Ids> & Partial<Pick<T, Ids>>;

/** A StreamResponse as an agent sends it (`EventQueue.send`): ids it leaves out are its task's,
 * and a message without `messageId` or `role` is the agent's, with a fresh id. */
export interface AgentEvent {
  task?: IdsOptional<Task, 'id' | 'contextId'>;
  message?: Exclude<AgentMessage, string>;
  statusUpdate?: IdsOptional<TaskStatusUpdateEvent, 'taskId' | 'contextId'>;
  artifactUpdate?: IdsOptional<TaskArtifactUpdateEvent, 'taskId' | 'contextId'>;
}

/** An agent. A thrown error or rejected promise fails the task with its message; an A2AError
 * other than InternalError thrown before the first event refuses the request instead (its caller
 * gets the error, and no task is made). */
export interface AgentExecutor {
  execute(context: ExecuteContext, events: EventQueue): Promise<void> | void;
  /** Optional: the running `execute` sees `context.signal` aborted either way, and the task
   * ends CANCELED. */
  cancel?(context: RequestContext, events: EventQueue): Promise<void> | void;
  /** Extension methods this agent serves, by JSON-RPC name (also `POST {base}/{name}` over
   * HTTP+JSON, and `path` when given). Each belongs to an extension the card declares; a name
   * of a core method is refused when the server is made. A thrown A2AError subclass is sent as
   * that error, anything else as InternalError. */
  methods?: { [name: string]: ExtensionMethod };
  /** Profile extensions (URIs the card declares) and their rules: each check runs on every
   * incoming message of a request that activates the extension, before any task is made; a
   * throw refuses the message with InvalidParamsError naming the extension and the rule. */
  profiles?: { [extension: string]: (message: Message) => Promise<void> | void };
}

/** One extension method of an agent. */
export interface ExtensionMethod {
  /** The URI of the extension it belongs to (calling it activates that extension). */
  extension: string;
  /** Another HTTP+JSON path to serve it at. */
  path?: string;
  handler(params: unknown, context: MethodContext): Promise<unknown> | unknown;
}

/** What an extension method's handler knows about the call it serves. */
export interface MethodContext {
  method: string;
  extension: string;
  tenant: string;
  /** The authenticated caller (null when anonymous). */
  principal: { name: string; scopes: string[] } | null;
  /** Extension URIs the client asked for that the agent declares. */
  extensions: string[];
  traceContext: { traceparent?: string; tracestate?: string; baggage?: string };
  /** Aborted when the caller leaves before the answer (an `AbortError` DOMException). */
  readonly signal: AbortSignal;
}

/** How callers authenticate (any one declared scheme admits a caller) and what is signed. */
export interface SecurityOptions {
  /** API key -> the principal it names. */
  apiKeys?: { [key: string]: string };
  /** Where API keys travel (default the `X-API-Key` header). */
  apiKeyLocation?: { in: 'header' | 'query' | 'cookie'; name: string };
  /** Bearer JWTs checked against a JWKS (`jwksUrl`, fetched and cached, or a fixed `jwks`); a
   * token must name one of `issuers` (its `iss`) and one of `audiences` (its `aud`). */
  jwt?: { jwksUrl?: string; jwks?: { keys: object[] }; issuers: string[]; audiences: string[]; leeway?: number; algorithms?: string[] };
  /** HTTPS with PEM files; `clientCa` requires client certificates (mutual TLS). */
  tls?: { cert: string; key: string; clientCa?: string };
  /** A2A operation name (`"*"` for all) -> scopes it needs (403 without them). */
  requiredScopes?: { [method: string]: string[] };
  /** Signs the served cards: a PEM private key, `ES256` / `RS256` / `EdDSA`, and its kid. */
  cardSigningKey?: { pem: string; alg: string; kid: string };
  /** Signs push notifications (public key at /.well-known/a2a-push-jwks.json). */
  pushSigningKey?: { pem: string; alg: string; kid: string };
  /** `"principal"` (default: a task is visible to the principal that made it) or `"shared"`. */
  taskVisibility?: 'principal' | 'shared';
  /**
   * Non-public push targets allowed anyway (all refused by default: SSRF). `true`: any target;
   * a list: only these host names (matched by name), IP addresses and CIDR ranges (matched
   * against the resolved address), e.g. `["127.0.0.1", "10.0.0.0/8", "::1", "hooks.internal"]`.
   */
  allowPrivateWebhooks?: boolean | string[];
}

/** Limits on what one client can make the server hold (absent: core's defaults). */
export interface ServerLimits {
  /** Largest request body (default 8 MiB; 413 / -32600 beyond it). */
  maxBodyBytes?: number;
  /** Bytes that request bodies larger than 64 KiB may hold at once, server-wide, until their requests are answered (default 64 MiB, never less than `maxBodyBytes`; 503 with Retry-After beyond it). */
  maxBodyBytesInFlight?: number;
  /** Most parts in one message (default 256). */
  maxPartsPerMessage?: number;
  /** Most history messages any read returns (default 1000). */
  maxHistoryLength?: number;
  /** About how many bytes of the client's messages one task may hold: a message that would take it past is refused (InvalidRequestError; default 64 MiB; the agent's output does not count). */
  maxTaskBytes?: number;
  /** Most concurrent streams on one task (default 64). */
  maxStreamsPerTask?: number;
  /** Seconds a blocking SendMessage waits before it returns the task as it stands (default 600). */
  blockingTimeout?: number;
  /** Largest request head in bytes (default 65536; 431 beyond it). */
  maxHeaderBytes?: number;
  /** Seconds a client may take to send its first byte, and on HTTP/1 a request head once begun (default 30; 408 beyond it). */
  headerReadTimeout?: number;
  /** Seconds a request body may take to arrive (default 30; 408 beyond it). */
  bodyReadTimeout?: number;
  /** Seconds a connection may stay open with no request in flight before it is closed (an open stream counts; default 120). */
  idleTimeout?: number;
  /** Seconds `execute` may run before it is aborted and its task ends FAILED (default: no limit). */
  executorTimeout?: number;
  /** Most connections served at once; at the cap accepting waits until one closes (default 4096). */
  maxConnections?: number;
  /** Seconds running executions get to finish at a graceful stop before their tasks end FAILED (default 1). */
  shutdownGrace?: number;
  /** Most requests one HTTP/2 connection may have open at once (default 100). */
  maxStreamsPerConnection?: number;
}

/** How push notifications are delivered. A delivery that fails (a connection error, a timeout,
 * a 5xx or 429) is retried after about `initialBackoff` seconds, each wait doubling up to
 * `maxBackoff`, until `maxAttempts` attempts were made: by default 4 over about 3.5 s. */
export interface PushOptions {
  /** Attempts per notification, the first included (default 4; 1: no retry). */
  maxAttempts?: number;
  /** Seconds one attempt may take, connecting included (default 10). */
  timeout?: number;
  /** Seconds before the first retry (default 0.5). */
  initialBackoff?: number;
  /** Longest wait between two attempts, in seconds (default 8). */
  maxBackoff?: number;
}

/** Read by core, strictly: an unknown or mistyped option is refused (InvalidParamsError naming it). */
export interface AgentServerOptions {
  /** "memory" (default), "sqlite:PATH" or a PostgreSQL URL. */
  store?: string;
  /** When given, every request must carry one of these as `Authorization: Bearer …`; an
   * object maps each token to the principal it authenticates (tasks belong to principals);
   * `[token, principal]` pairs too. */
  bearerTokens?: string[] | [string, string][] | { [token: string]: string };
  /** The card GetExtendedAgentCard returns to authenticated callers. */
  extendedCard?: Omit<AgentCard, 'supportedInterfaces'> & Partial<Pick<AgentCard, 'supportedInterfaces'>>;
  limits?: ServerLimits;
  /** How often and how long a failing webhook is retried. */
  push?: PushOptions;
  security?: SecurityOptions;
  /** Serve the card in strict A2A 1.0 form: without the 0.3 fields a declared 0.3 interface
   * adds beside the 1.0 ones (for 1.0 clients that refuse unknown fields). */
  strictV1Card?: boolean;
  /** Origins whose web pages may call the agent across origins (CORS), as a browser names
   * them (`'https://app.example.com'`), or `'*'` for any; none by default. */
  corsOrigins?: string[];
  /** The memory store's cap on tasks (default 10000). */
  maxTasks?: number;
  /** Seconds the memory store keeps a finished task (default 3600). */
  taskRetention?: number;
  /** About how many bytes of task contents the memory store keeps (default 268435456, 256 MiB):
   * the oldest finished tasks make room; a save only live tasks leave no room for is refused. */
  maxStoreBytes?: number;
  /** `host:port` (port 0: any) to serve Prometheus/OpenMetrics text at `/metrics` on, a
   * listener of its own: requests by binding, method and outcome with their latency, open
   * streams, task states, events applied, push outcomes, store latency. */
  metricsAddress?: string;
  /** The http(s) URL clients reach the server at (behind a proxy or in a container), which the
   * card's interfaces name; by default the bound address. */
  publicUrl?: string;
}

/** An A2A server for one agent: JSON-RPC, HTTP+JSON and gRPC on one port, SSE streams. */
export declare class AgentServer {
  /** When `card` declares no `supportedInterfaces`, the server's own are filled in. */
  /** An unchanged @a2a-js/sdk executor and the SDK's AgentCard (see `a2a-native/compat`).
   * (Declared first: `ConstructorParameters<typeof AgentServer>` reads the last signature.) */
  constructor(card: object, executor: import('./compat.js').SdkAgentExecutor, options?: AgentServerOptions);
  constructor(card: Omit<AgentCard, 'supportedInterfaces'> & Partial<Pick<AgentCard, 'supportedInterfaces'>>, executor: AgentExecutor, options?: AgentServerOptions);
  /** Binds and serves in the background; resolves to the bound port (0 picks a free one). */
  listen(port?: number, host?: string): Promise<number>;
  /** Stops gracefully; afterwards the server keeps nothing of Node's alive. */
  close(): Promise<void>;
  readonly listening: boolean;
  /** The bound port (null when not listening). */
  readonly port: number | null;
  /** `http://host:port` (null when not listening). */
  readonly url: string | null;
  /** `http://host:port/metrics` (null when not listening or without `metricsAddress`). */
  readonly metricsUrl: string | null;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Read by core's `ClientOptions`, strictly: an unknown or mistyped option is refused
 * (InvalidParamsError naming it), as in every binding. */
export interface ClientOptions {
  /** Sent as `Authorization: Bearer …`. */
  bearerToken?: string;
  /** `[headerName, value]`. */
  apiKey?: [string, string];
  /** Extra headers on every request. */
  headers?: Record<string, string> | [string, string][];
  /** Per-request timeout in seconds (as in every binding); for a stream, its response head. */
  timeout?: number;
  /** Seconds connecting may take (default 10). */
  connectTimeout?: number;
  /** Seconds a stream may stay silent (no event, no keep-alive) before it is resubscribed (default 300). */
  streamIdleTimeout?: number;
  /** "JSONRPC" (default), "HTTP+JSON", or "GRPC" (when the card declares it). */
  binding?: 'JSONRPC' | 'HTTP+JSON' | 'GRPC';
  /** Retries of idempotent calls on connection errors and 502/503/504 (default 2). */
  retries?: number;
  /** How often in a row a dropped stream is resubscribed (default 6: over about 3 to 5 s, what a server restart takes). */
  streamReconnects?: number;
  /** The most bytes one response or stream event may take (default 64 MiB). */
  maxResponseBytes?: number;
  /** Used the way the agent card asks, per call: a bearer token, an API key (sent where the
   * card says), OAuth 2.0 client credentials (token fetched, cached, refreshed; the secret goes
   * only to an https `tokenUrl`, or http on this machine). */
  cardBearerToken?: string;
  cardApiKey?: string;
  clientCredentials?: [clientId: string, clientSecret: string];
  /** A CA certificate (PEM text) to trust besides the system's. */
  caCert?: string;
  /** A client certificate and its key (PEM text) for agents that require mutual TLS. */
  clientIdentity?: string;
  /** `caCert` from a PEM file. */
  caCertFile?: string;
  /** `clientIdentity` from `[certificate PEM file, key PEM file]`. */
  clientCertFiles?: [certFile: string, keyFile: string];
  /** Called before each request for headers to add (tokens that expire, signatures); `method`
   * is the A2A operation (`SendMessage`, ...). A throw or rejection fails the call unsent. */
  credentials?: (method: string, url: string) => Record<string, string> | Promise<Record<string, string>>;
  /** Whether an agent that only speaks A2A 0.3 may be used, through 0.3 (default true). */
  allowV03?: boolean;
  /** Extension URIs asked for on every call (`A2A-Extensions`). */
  extensions?: string[];
}

/** Per call: an AbortSignal that ends the call (its request is dropped, the connection
 * closed) and rejects it with the signal's reason, as fetch does. For a stream, it closes the
 * stream (the task goes on). */
export interface CallOptions {
  signal?: AbortSignal;
}

export interface SendOptions extends CallOptions {
  taskId?: string;
  contextId?: string;
  configuration?: SendMessageConfiguration;
  metadata?: { [key: string]: unknown };
}

/** The events of one stream. The server ends it when the task ends; `close()` (or leaving a
 * `for await` loop early) ends it now. */
export declare class EventStream implements AsyncIterableIterator<StreamResponse> {
  next(): Promise<IteratorResult<StreamResponse, undefined>>;
  return(): Promise<IteratorResult<StreamResponse, undefined>>;
  close(): Promise<void>;
  [Symbol.asyncIterator](): EventStream;
}

/** A client of one agent. Every call rejects with an A2AError subclass on failure. */
export declare class Client {
  private constructor();
  /** Calls an extension method the agent serves, asking for `extensions` on this call beside
   * the client's own; resolves to its result. */
  call(method: string, params?: unknown, options?: { extensions?: string[] } & CallOptions): Promise<unknown>;
  /** The extensions the agent activated for the last `call`. */
  readonly lastActivated: string[];
  /** Resolves the agent card at `url` and picks an interface. */
  static connect(url: string, options?: ClientOptions): Promise<Client>;
  /** A client for an agent card, without network access. */
  static fromCard(card: AgentCard, options?: ClientOptions): Client;
  readonly card: AgentCard;
  readonly url: string;
  readonly binding: string;
  /** "1.0" or "0.3". */
  readonly protocolVersion: string;
  /** SendMessage: resolves to `{ task }` or `{ message }`. A string is one text part. */
  send(message: string | Message | SendMessageRequest, options?: SendOptions): Promise<SendMessageResponse>;
  /** SendStreamingMessage: `for await (const event of client.stream('hi'))`. */
  stream(message: string | Message | SendMessageRequest, options?: SendOptions): EventStream;
  /** SubscribeToTask: the task first, then its live events. */
  subscribe(taskId: string, options?: CallOptions): EventStream;
  getTask(taskId: string, options?: { historyLength?: number } & CallOptions): Promise<Task>;
  listTasks(request?: ListTasksQuery, options?: CallOptions): Promise<ListTasksResponse>;
  /** Every task ListTasks finds, page after page. */
  listAllTasks(request?: ListTasksQuery): AsyncIterable<Task>;
  cancel(taskId: string, options?: { metadata?: { [key: string]: unknown } } & CallOptions): Promise<Task>;
  createPushConfig(config: TaskPushNotificationConfig, options?: CallOptions): Promise<TaskPushNotificationConfig>;
  getPushConfig(taskId: string, configId: string, options?: CallOptions): Promise<TaskPushNotificationConfig>;
  /** One page of the task's push configs; `nextPageToken` (when not empty) asks for the next. */
  listPushConfigs(taskId: string, options?: { pageSize?: number; pageToken?: string } & CallOptions): Promise<ListTaskPushNotificationConfigsResponse>;
  deletePushConfig(taskId: string, configId: string, options?: CallOptions): Promise<void>;
  getExtendedCard(options?: CallOptions): Promise<AgentCard>;
}

/** A user message with a fresh id: a string becomes one text part. */
export declare function userMessage(content: string | Part[], ids?: { taskId?: string; contextId?: string }): Message;

/** The native module's version. */
export declare const version: string;

/** The level of the core's log events (a line each on standard error: `WARN a2a_native.task.manager: ...`):
 *  `'warn'` by default (warnings and errors), `'off'` for none. InvalidParamsError for another name. */
export declare function setLogLevel(level: 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'off'): void;

/** Reads `value` as the A2A 1.0 model `typeName` and returns its canonical ProtoJSON form;
 * throws InvalidParamsError naming the offending field. */
export declare function normalize(typeName: string, value: unknown): unknown;
/** Converts a value of the 0.3 wire form to A2A 1.0. */
export declare function v03ToV10(typeName: string, value: unknown): unknown;
/** Converts an A2A 1.0 value to the 0.3 wire form. */
export declare function v10ToV03(typeName: string, value: unknown): unknown;
/** Whether a task may move from `from` (null: a task being created) to `to`. */
export declare function canTransition(from: TaskState | null, to: TaskState): boolean;
export declare function stateClass(state: TaskState): 'terminal' | 'interrupted' | 'active' | 'unspecified';
/** Core's error table (one row per spec error). */
export declare function errorTable(): ErrorRow[];


/** The RFC 8785 (JCS) canonical JSON text of a value (as signed Agent Cards use). */
export declare function canonicalize(value: unknown): string;
/** `card` with one more signature made with the PEM private key. */
export declare function signCard(card: AgentCard, pem: string, options: { alg: 'ES256' | 'RS256' | 'EdDSA'; kid: string; jku?: string }): AgentCard;
/** The kid of a signature of `card` that verifies under the JWKS; throws UnauthenticatedError. */
export declare function verifyCard(card: AgentCard, jwks: { keys: object[] }, algorithms?: string[]): string;

/** Checks signed push notifications at your webhook (signature, audience, issuer, freshness,
 * body hash, replay, token). */
export declare class PushVerifier {
  /** `maxAge`: seconds a notification stays acceptable (default 300; from 1 s to 30 days). */
  constructor(jwks: { keys: object[] }, audience: string, options?: { issuer?: string; token?: string; maxAge?: number });
  verify(headers: Record<string, string> | [string, string][], body: Uint8Array | string): { taskId: string; jti: string; issuedAt: number };
}
