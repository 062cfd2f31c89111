// Our client inside a JVM application instrumented with OpenTelemetry: after
// useOpenTelemetryContext(), a call made in the application's current span carries its W3C
// context, so the agent's request (and the executor's context) joins the application's trace.
package a2anative

import io.opentelemetry.api.GlobalOpenTelemetry
import io.opentelemetry.api.OpenTelemetry
import io.opentelemetry.api.trace.Span
import io.opentelemetry.api.trace.SpanContext
import io.opentelemetry.api.trace.TraceFlags
import io.opentelemetry.api.trace.TraceState
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator
import io.opentelemetry.context.Context
import io.opentelemetry.context.propagation.ContextPropagators
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test

class TraceTest {
    private class Recorder : AgentExecutor {
        val seen = mutableListOf<Pair<String?, String?>>()

        override suspend fun execute(context: RequestContext, events: EventSink) {
            seen.add(context.traceparent to context.tracestate)
            events.status(TaskState.COMPLETED)
        }

        override suspend fun cancel(context: RequestContext, events: EventSink) {}
    }

    @Test
    fun `client calls carry the caller's OpenTelemetry context`() = test {
        GlobalOpenTelemetry.resetForTest()
        GlobalOpenTelemetry.set(OpenTelemetry.propagating(ContextPropagators.create(W3CTraceContextPropagator.getInstance())))
        useOpenTelemetryContext()
        val agent = Recorder()
        try {
            serving(agent) { server ->
                val client = Client.connect(server.url()!!)
                val traceId = "0af7651916cd43dd8448eb211c80319c"
                val spanId = "b7ad6b7169203331"
                val state = TraceState.builder().put("vendor", "1").build()
                val span = SpanContext.create(traceId, spanId, TraceFlags.getSampled(), state)
                val scope = Context.current().with(Span.wrap(span)).makeCurrent()
                try {
                    client.sendText("traced")
                } finally {
                    scope.close()
                }
                client.sendText("plain")
                assertEquals(listOf("00-$traceId-$spanId-01" to "vendor=1", null to null), agent.seen)
            }
        } finally {
            setTraceContextSource(null)
            GlobalOpenTelemetry.resetForTest()
        }
    }
}
