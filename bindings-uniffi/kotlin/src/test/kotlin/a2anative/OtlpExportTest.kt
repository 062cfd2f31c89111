// A Kotlin agent's server exporting over OTLP, as an operator configures it (OTEL_* variables):
// one trace crosses the Kotlin application's span → our client → our server (both spans named
// `lf.a2a.v1.A2AService/SendMessage`, OTel's RPC name) → the execution (`a2a.execute`) → the push webhook, decoded here with
// OpenTelemetry's own OTLP messages and linked parent to child; the server's metrics arrive too.
// Export is set up once per process from the environment, so the application runs in a child
// JVM (OtlpChild) with the variables set.
package a2anative

import com.sun.net.httpserver.HttpServer
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest
import io.opentelemetry.proto.trace.v1.Span as OtlpSpan
import java.net.InetSocketAddress
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.TimeUnit
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

private const val TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
private const val APP_SPAN = "00f067aa0ba902b7"

class OtlpExportTest {
    private fun hex(bytes: com.google.protobuf.ByteString) = bytes.toByteArray().joinToString("") { "%02x".format(it) }

    @Test
    fun `one trace crosses the Kotlin client, our server, the execution and the webhook`() {
        val spans = CopyOnWriteArrayList<Pair<String, OtlpSpan>>() // (service, span)
        val metrics = CopyOnWriteArrayList<String>()
        val hooks = CopyOnWriteArrayList<String?>()
        val receiver = HttpServer.create(InetSocketAddress("127.0.0.1", 0), 0)
        receiver.createContext("/") { exchange ->
            val body = exchange.requestBody.readBytes()
            when (exchange.requestURI.path) {
                "/v1/traces" -> ExportTraceServiceRequest.parseFrom(body).resourceSpansList.forEach { rs ->
                    val service = rs.resource.attributesList.first { it.key == "service.name" }.value.stringValue
                    rs.scopeSpansList.flatMap { it.spansList }.forEach { spans.add(service to it) }
                }
                "/v1/metrics" -> ExportMetricsServiceRequest.parseFrom(body).resourceMetricsList.forEach { rm ->
                    rm.scopeMetricsList.flatMap { it.metricsList }.forEach { metrics.add(it.name) }
                }
                "/hook" -> hooks.add(exchange.requestHeaders.getFirst("traceparent"))
            }
            exchange.sendResponseHeaders(200, -1)
            exchange.close()
        }
        receiver.start()
        try {
            val collector = "http://127.0.0.1:${receiver.address.port}"
            val java = "${System.getProperty("java.home")}/bin/java"
            val child = ProcessBuilder(
                java, "-cp", System.getProperty("java.class.path"),
                "-Djna.library.path=${System.getProperty("jna.library.path")}",
                "a2anative.OtlpChild", "$collector/hook",
            ).redirectErrorStream(true).apply {
                environment()["OTEL_EXPORTER_OTLP_ENDPOINT"] = collector
                environment()["OTEL_SERVICE_NAME"] = "kotlin-agent"
                environment()["OTEL_BSP_SCHEDULE_DELAY"] = "50"
                environment()["OTEL_METRIC_EXPORT_INTERVAL"] = "200"
            }.start()
            val output = child.inputStream.bufferedReader().readText()
            assertTrue(child.waitFor(60, TimeUnit.SECONDS), output)
            assertEquals(0, child.exitValue(), output)

            val deadline = System.currentTimeMillis() + 10_000
            while (spans.none { it.second.name == "a2a.execute" } && System.currentTimeMillis() < deadline) Thread.sleep(50)
            fun one(name: String, parent: String): OtlpSpan {
                val found = spans.filter { (service, s) -> s.name == name && hex(s.parentSpanId) == parent && service == "kotlin-agent" }
                assertEquals(1, found.size, "$name under $parent: ${spans.map { it.second.name to hex(it.second.parentSpanId) }}")
                return found[0].second
            }
            val send = "lf.a2a.v1.A2AService/SendMessage"
            val client = one(send, APP_SPAN)
            val request = one(send, hex(client.spanId))
            val execute = one("a2a.execute", hex(request.spanId))
            for (span in listOf(client, request, execute)) assertEquals(TRACE_ID, hex(span.traceId))
            assertEquals(OtlpSpan.SpanKind.SPAN_KIND_CLIENT, client.kind)
            assertEquals(OtlpSpan.SpanKind.SPAN_KIND_SERVER, request.kind)
            // The push notifications continue the trace, from the execution span.
            assertTrue(hooks.isNotEmpty(), output)
            assertTrue(hooks.all { it == "00-$TRACE_ID-${hex(execute.spanId)}-01" }, "$hooks")
            assertTrue("a2a.server.requests" in metrics, "$metrics")
        } finally {
            receiver.stop(0)
        }
    }
}

/** The application: a Kotlin agent's server, and our client called in the application's span. */
object OtlpChild {
    private class Done : AgentExecutor {
        override suspend fun execute(context: RequestContext, events: EventSink) {
            events.status(TaskState.WORKING)
            events.status(TaskState.COMPLETED)
        }
        override suspend fun cancel(context: RequestContext, events: EventSink) {}
    }

    @JvmStatic
    fun main(args: Array<String>) = kotlinx.coroutines.runBlocking {
        val hook = args[0]
        val w3c = io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator.getInstance()
        io.opentelemetry.api.GlobalOpenTelemetry.set(
            io.opentelemetry.api.OpenTelemetry.propagating(io.opentelemetry.context.propagation.ContextPropagators.create(w3c)),
        )
        useOpenTelemetryContext()
        val options = ServerOptions(securityJson = """{"allowPrivateWebhooks": true}""")
        val card = agentCard("kotlin-agent", "traced").let { it.copy(capabilities = it.capabilities.copy(pushNotifications = true)) }
        val server = AgentServer(card, Done(), options)
        server.start()
        val client = Client.connect(server.url()!!)
        val app = io.opentelemetry.api.trace.SpanContext.create(
            TRACE_ID, APP_SPAN, io.opentelemetry.api.trace.TraceFlags.getSampled(), io.opentelemetry.api.trace.TraceState.getDefault(),
        )
        val message = userMessage("traced")
        val push = TaskPushNotificationConfig(url = hook)
        val request = SendMessageRequest(message = message, configuration = SendMessageConfiguration(taskPushNotificationConfig = push))
        val scope = io.opentelemetry.context.Context.current().with(io.opentelemetry.api.trace.Span.wrap(app)).makeCurrent()
        try {
            client.sendMessage(request)
        } finally {
            scope.close()
        }
        kotlinx.coroutines.delay(1000) // the push notifications go out after the reply
        server.stop()
        println("done")
    }
}
