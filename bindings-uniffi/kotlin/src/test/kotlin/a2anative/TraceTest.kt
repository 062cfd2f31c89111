// Our client inside a JVM application instrumented with OpenTelemetry: after
// useOpenTelemetryContext(), a call made in the application's current span carries its W3C
// context and baggage, so the agent's request (and the executor's context) joins the application's trace.
package a2anative

import io.opentelemetry.api.GlobalOpenTelemetry
import io.opentelemetry.api.OpenTelemetry
import io.opentelemetry.api.baggage.Baggage
import io.opentelemetry.api.baggage.propagation.W3CBaggagePropagator
import io.opentelemetry.api.trace.Span
import io.opentelemetry.api.trace.SpanContext
import io.opentelemetry.api.trace.TraceFlags
import io.opentelemetry.api.trace.TraceState
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator
import io.opentelemetry.context.Context
import io.opentelemetry.context.propagation.ContextPropagators
import io.opentelemetry.context.propagation.TextMapPropagator
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test

class TraceTest {
    private class Recorder : AgentExecutor {
        val seen = mutableListOf<Triple<String?, String?, String?>>()
        val traces = mutableListOf<String>()

        override suspend fun execute(context: RequestContext, events: EventSink) {
            seen.add(Triple(context.traceparent, context.tracestate, context.baggage))
            traces.add(Span.fromContext(context.openTelemetryContext()).spanContext.traceId)
            events.status(TaskState.COMPLETED)
        }

        override suspend fun cancel(context: RequestContext, events: EventSink) {}
    }

    @Test
    fun `client calls carry the caller's OpenTelemetry context`() = test {
        GlobalOpenTelemetry.resetForTest()
        val w3c = TextMapPropagator.composite(W3CTraceContextPropagator.getInstance(), W3CBaggagePropagator.getInstance())
        GlobalOpenTelemetry.set(OpenTelemetry.propagating(ContextPropagators.create(w3c)))
        useOpenTelemetryContext()
        val agent = Recorder()
        try {
            serving(agent) { server ->
                val client = Client.connect(server.url()!!)
                val traceId = "0af7651916cd43dd8448eb211c80319c"
                val spanId = "b7ad6b7169203331"
                val state = TraceState.builder().put("vendor", "1").build()
                val span = SpanContext.create(traceId, spanId, TraceFlags.getSampled(), state)
                val baggage = Baggage.builder().put("user", "ada").build()
                val scope = Context.current().with(Span.wrap(span)).with(baggage).makeCurrent()
                try {
                    client.sendText("traced")
                } finally {
                    scope.close()
                }
                client.sendText("plain")
                assertEquals(listOf(Triple("00-$traceId-$spanId-01", "vendor=1", "user=ada"), Triple(null, null, null)), agent.seen)
                // The executor's OpenTelemetry context: the caller's span, for its own spans' parent.
                assertEquals(listOf(traceId, "00000000000000000000000000000000"), agent.traces)
            }
        } finally {
            setTraceContextSource(null)
            GlobalOpenTelemetry.resetForTest()
        }
    }

    @Test
    fun `a trace context source that throws leaves calls untraced, not failed`() = test {
        setTraceContextSource(object : TraceContextSource {
            override fun current(): TraceContext? = throw IllegalStateException("no context here")
        })
        try {
            serving(Recorder()) { server ->
                val client = Client.connect(server.url()!!)
                assertEquals(TaskState.COMPLETED, client.sendText("untraced").task!!.status.state)
            }
        } finally {
            setTraceContextSource(null)
        }
    }
}
