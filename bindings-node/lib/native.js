// Loads the native module (built by `npm run build`) and turns its failures into A2AError
// subclasses. A native error carries the core error as JSON after a marker (src/errors.rs).
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { A2AError, ERRORS } from '../errors.js';

const require = createRequire(import.meta.url);
const root = new URL('..', import.meta.url);

// napi's platform suffix for this machine (`linux-x64-gnu`), the name of the native module's
// file (`a2a-native.<suffix>.node`) and of the npm package that ships it (`a2a-native-<suffix>`).
function platformSuffix() {
  if (process.platform !== 'linux') return `${process.platform}-${process.arch}`;
  const glibc = process.report?.getReport()?.header?.glibcVersionRuntime;
  return `linux-${process.arch}-${glibc ? 'gnu' : 'musl'}`;
}

function load() {
  // A2A_NATIVE_MODULE picks another build (the benchmark loads a release one).
  if (process.env.A2A_NATIVE_MODULE) return require(process.env.A2A_NATIVE_MODULE);
  const suffix = platformSuffix();
  // A build in this directory first (`npm run build` in the source tree) ...
  const file = readdirSync(root).find((f) => f === `a2a-native.${suffix}.node`);
  if (file) return require(new URL(file, root).pathname);
  // ... else the platform package npm installed as an optional dependency.
  try {
    return require(`a2a-native-${suffix}`);
  } catch (e) {
    if (e?.code !== 'MODULE_NOT_FOUND') throw e;
    throw new Error(`a2a-native: no native module for ${suffix}: install the package a2a-native-${suffix} ` +
      `(npm installs it with a2a-native on a supported platform), or build one with \`npm run build\``, { cause: e });
  }
}

export const native = load();

const MARKER = '\u0001a2a:';

// Errors a JavaScript callback (the credentials function) threw, by a tag their message carries
// across the native side, so the call's error can name them as its `cause`. Bounded: a call
// given up before its error surfaced leaves its entry, and the oldest go first.
const failures = new Map();
let failureSeq = 0;
const FAILURE_TAG = / \[a2a-failure:(\d+)\]/;

/** An Error carrying `e`'s message and a tag for `fromNative` to find `e` again by. */
export function keepFailure(e) {
  const id = ++failureSeq;
  failures.set(id, e);
  if (failures.size > 100) failures.delete(failures.keys().next().value);
  const text = e instanceof Error ? e.message : String(e);
  return new Error(`${text} [a2a-failure:${id}]`);
}

/** The A2AError a native failure stands for (other errors unchanged). */
export function fromNative(e) {
  if (e instanceof Error && typeof e.message === 'string' && e.message.startsWith(MARKER)) {
    const body = JSON.parse(e.message.slice(MARKER.length));
    const kind = ERRORS[body.name] ?? A2AError;
    let message = body.message;
    let cause;
    const tagged = FAILURE_TAG.exec(message);
    if (tagged) {
      cause = failures.get(Number(tagged[1]));
      failures.delete(Number(tagged[1]));
      message = message.replace(FAILURE_TAG, '');
    }
    const error = new kind(message, { metadata: body.metadata ?? {}, violations: body.violations ?? [] });
    if (cause !== undefined) error.cause = cause;
    return error;
  }
  return e;
}

const rethrow = (e) => {
  throw fromNative(e);
};

/** A native promise, rejecting with A2AError subclasses. */
export const settle = (promise) => promise.then(undefined, rethrow);

/** A native synchronous call, throwing A2AError subclasses. */
export function call(fn) {
  try {
    return fn();
  } catch (e) {
    throw fromNative(e);
  }
}

/** JSON text of a value the caller gave, or a typed error naming what it is. */
export function json(value, what) {
  let text;
  try {
    text = JSON.stringify(value);
  } catch (e) {
    throw new ERRORS.InvalidParamsError(`${what}: ${e.message}`, { violations: [{ field: what, description: e.message }] });
  }
  if (text === undefined) {
    throw new ERRORS.InvalidParamsError(`${what}: expected a JSON value`, { violations: [{ field: what, description: 'expected a JSON value' }] });
  }
  // JSON.stringify writes NaN and ±Infinity as null, silently: refused instead, naming where.
  // Looked for only when the text has a null at all (A2A values rarely do).
  if (text.includes('null')) {
    const where = nonFinite(value, what);
    if (where) {
      const description = 'NaN and infinities are not JSON';
      throw new ERRORS.InvalidParamsError(`${where}: ${description}`, { violations: [{ field: where, description }] });
    }
  }
  return text;
}

/** The path of the first NaN or ±Infinity in `value` (as JSON.stringify would see it). */
function nonFinite(value, path, seen = new Set()) {
  if (typeof value === 'number') return Number.isFinite(value) ? null : path;
  if (value === null || typeof value !== 'object' || seen.has(value)) return null;
  if (typeof value.toJSON === 'function') return null;
  seen.add(value);
  for (const [key, item] of Object.entries(value)) {
    const found = nonFinite(item, `${path}.${key}`, seen);
    if (found) return found;
  }
  return null;
}
