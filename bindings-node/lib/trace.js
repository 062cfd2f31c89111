// The caller's OpenTelemetry context, for the native client to carry (W3C `traceparent`,
// `tracestate` and `baggage`), so a call made inside an application's span joins that trace.
// Read through @opentelemetry/api when the application has it (its propagator and context manager are
// global, whichever copy of the API loads them); nothing otherwise.
import { createRequire } from 'node:module';

let api;
function otel() {
  if (api === undefined) {
    try {
      api = createRequire(import.meta.url)('@opentelemetry/api');
    } catch {
      api = null;
    }
  }
  return api;
}

/** Runs `fn` in the OpenTelemetry context a request carried (`{ traceparent, tracestate,
 * baggage }`), so the spans an executor opens are children of the request's execution; runs it
 * as it is without the API or without a context. */
export function withRequestContext(traceContext, fn) {
  const otelApi = otel();
  if (!otelApi || !traceContext || Object.keys(traceContext).length === 0) return fn();
  const extracted = otelApi.propagation.extract(otelApi.context.active(), traceContext);
  return otelApi.context.with(extracted, fn);
}

/** `{ traceparent, tracestate, baggage }` of the active context (undefined without the API). */
export function callerTrace() {
  const otelApi = otel();
  if (!otelApi) return undefined;
  const carrier = {};
  otelApi.propagation.inject(otelApi.context.active(), carrier);
  return { traceparent: carrier.traceparent, tracestate: carrier.tracestate, baggage: carrier.baggage };
}
