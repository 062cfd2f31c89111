// Client calls that carry the JVM's current OpenTelemetry context. opentelemetry-api is an
// optional dependency of this package: an application that calls this has it.
package a2anative

import io.opentelemetry.api.GlobalOpenTelemetry
import io.opentelemetry.context.Context
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
