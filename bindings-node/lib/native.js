// Loads the native module (built by `npm run build`) and turns its failures into A2AError
// subclasses. A native error carries the core error as JSON after a marker (src/errors.rs).
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { A2AError, ERRORS } from '../errors.js';

const require = createRequire(import.meta.url);
const root = new URL('..', import.meta.url);

function load() {
  // A2A_NATIVE_MODULE picks another build (the benchmark loads a release one).
  if (process.env.A2A_NATIVE_MODULE) return require(process.env.A2A_NATIVE_MODULE);
  // `napi build --platform` names the file for the platform: a2a-native.linux-x64-gnu.node.
  const prefix = `a2a-native.${process.platform}-${process.arch}`;
  const file = readdirSync(root).find((f) => f.startsWith(prefix) && f.endsWith('.node'));
  if (!file) {
    throw new Error(`a2a-native: no native module for ${process.platform}-${process.arch} in ${root.pathname} (run \`npm run build\`)`);
  }
  return require(new URL(file, root).pathname);
}

export const native = load();

const MARKER = '\u0001a2a:';

/** The A2AError a native failure stands for (other errors unchanged). */
export function fromNative(e) {
  if (e instanceof Error && typeof e.message === 'string' && e.message.startsWith(MARKER)) {
    const body = JSON.parse(e.message.slice(MARKER.length));
    const kind = ERRORS[body.name] ?? A2AError;
    return new kind(body.message, { metadata: body.metadata ?? {}, violations: body.violations ?? [] });
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
  return text;
}
