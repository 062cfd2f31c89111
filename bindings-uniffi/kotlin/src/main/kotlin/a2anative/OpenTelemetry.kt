// Client calls that carry the JVM's current OpenTelemetry context. opentelemetry-api is an
// optional dependency of this package: an application that calls this has it.
package a2anative

import io.opentelemetry.api.GlobalOpenTelemetry
import io.opentelemetry.context.Context
import io.opentelemetry.context.propagation.TextMapGetter
import io.opentelemetry.context.propagation.TextMapSetter

/**
 * From now on every client call carries the W3C trace context of the caller's current
 * OpenTelemetry context (`Context.current()`, written by GlobalOpenTelemetry's propagators), so
 * the agent's request joins the caller's trace. The context is read when the call starts, on the
 * calling thread: in coroutines, carry it with opentelemetry-extension-kotlin's
 * `asContextElement()`. `setTraceContextSource(null)` turns it off.
 */
fun useOpenTelemetryContext() = setTraceContextSource(OpenTelemetryContext)

private object OpenTelemetryContext : TraceContextSource {
    private val setter = TextMapSetter<MutableMap<String, String>> { carrier, key, value -> carrier?.put(key, value) }

    override fun current(): TraceContext? = runCatching {
        val carrier = HashMap<String, String>()
        GlobalOpenTelemetry.getPropagators().textMapPropagator.inject(Context.current(), carrier, setter)
        carrier["traceparent"]?.let { TraceContext(it, carrier["tracestate"], carrier["baggage"]) }
    }.getOrNull()
}

/**
 * The request's OpenTelemetry context (the caller's W3C trace context and baggage, read by
 * GlobalOpenTelemetry's propagators), for the executor's own spans to join the caller's trace:
 * `tracer.spanBuilder("work").setParent(context.openTelemetryContext())`, or in coroutines
 * `withContext(context.openTelemetryContext().asContextElement()) { ... }`.
 */
fun RequestContext.openTelemetryContext(): Context {
    val carrier = listOfNotNull(
        traceparent?.let { "traceparent" to it },
        tracestate?.let { "tracestate" to it },
        baggage?.let { "baggage" to it },
    ).toMap()
    return GlobalOpenTelemetry.getPropagators().textMapPropagator.extract(Context.root(), carrier, MapGetter)
}

private object MapGetter : TextMapGetter<Map<String, String>> {
    override fun keys(carrier: Map<String, String>): Iterable<String> = carrier.keys
    override fun get(carrier: Map<String, String>?, key: String): String? = carrier?.get(key)
}

