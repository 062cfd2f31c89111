// Our client and server exporting over OTLP, as an operator configures it (OTEL_* variables):
// one trace crosses the Kotlin application's span → our client → our server (both spans named
// `lf.a2a.v1.A2AService/SendMessage`, OTel's RPC name) → the execution (`a2a.execute`) → the push webhook, decoded here with
// OpenTelemetry's own OTLP messages and linked parent to child; the server's metrics arrive too.
// Export is set up once per process from the environment, so the application runs in a child
// JVM (OtlpChild) with the variables set. The second test drives a Python agent on our server
// (tests/otlp/python_agent.py) that opens its own span; skipped without the Python binding's venv.
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

    /** An OTLP/HTTP receiver (decoding with OpenTelemetry's own messages) and push webhook. */
    private class Receiver : AutoCloseable {
        val spans = CopyOnWriteArrayList<Pair<String, OtlpSpan>>() // (service, span)
        val metrics = CopyOnWriteArrayList<String>()
        val hooks = CopyOnWriteArrayList<String?>()
        private val server = HttpServer.create(InetSocketAddress("127.0.0.1", 0), 0).apply {
            createContext("/") { exchange ->
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
            start()
        }
        val url = "http://127.0.0.1:${server.address.port}"

        /** Waits (10 s at most) until a span named `name` has arrived, and a push notification. */
        fun await(name: String) {
            val deadline = System.currentTimeMillis() + 10_000
            while ((spans.none { it.second.name == name } || hooks.isEmpty()) && System.currentTimeMillis() < deadline) Thread.sleep(50)
        }

        override fun close() = server.stop(0)
    }

    /** Runs the application (OtlpChild) in a JVM of its own, with the OTEL_* variables set. */
    private fun application(collector: String, agentUrl: String): String {
        val java = "${System.getProperty("java.home")}/bin/java"
        val child = ProcessBuilder(
            java, "-cp", System.getProperty("java.class.path"),
            "-Djna.library.path=${System.getProperty("jna.library.path")}",
            "a2anative.OtlpChild", agentUrl, "$collector/hook",
        ).redirectErrorStream(true).apply {
            environment()["OTEL_EXPORTER_OTLP_ENDPOINT"] = collector
            environment()["OTEL_SERVICE_NAME"] = "kotlin-agent"
            environment()["OTEL_BSP_SCHEDULE_DELAY"] = "50"
            environment()["OTEL_METRIC_EXPORT_INTERVAL"] = "200"
        }.start()
        val output = child.inputStream.bufferedReader().readText()
        assertTrue(child.waitFor(60, TimeUnit.SECONDS), output)
        assertEquals(0, child.exitValue(), output)
        return output
    }

    private fun Receiver.one(name: String, parent: String, service: String): OtlpSpan {
        val found = spans.filter { (s, span) -> span.name == name && hex(span.parentSpanId) == parent && s == service }
        assertEquals(1, found.size, "$name under $parent from $service: ${spans.map { Triple(it.first, it.second.name, hex(it.second.parentSpanId)) }}")
        return found[0].second
    }

    private val send = "lf.a2a.v1.A2AService/SendMessage"

    @Test
    fun `one trace crosses the Kotlin client, our server, the execution and the webhook`() {
        Receiver().use { r ->
            val output = application(r.url, "-")
            r.await("a2a.execute")
            val client = r.one(send, APP_SPAN, "kotlin-agent")
            val request = r.one(send, hex(client.spanId), "kotlin-agent")
            val execute = r.one("a2a.execute", hex(request.spanId), "kotlin-agent")
            for (span in listOf(client, request, execute)) assertEquals(TRACE_ID, hex(span.traceId))
            assertEquals(OtlpSpan.SpanKind.SPAN_KIND_CLIENT, client.kind)
            assertEquals(OtlpSpan.SpanKind.SPAN_KIND_SERVER, request.kind)
            // The push notifications continue the trace: each delivery is an a2a.push client
            // span under the execution, and its webhook post names that span.
            assertTrue(r.hooks.isNotEmpty(), output)
            val deadline = System.currentTimeMillis() + 10_000
            while (r.spans.count { it.second.name == "a2a.push" } < r.hooks.size && System.currentTimeMillis() < deadline) Thread.sleep(50)
            val pushes = r.spans.map { it.second }.filter { it.name == "a2a.push" }
            assertTrue(pushes.all { hex(it.parentSpanId) == hex(execute.spanId) && it.kind == OtlpSpan.SpanKind.SPAN_KIND_CLIENT }, "$pushes")
            val named = pushes.map { "00-$TRACE_ID-${hex(it.spanId)}-01" }.toSet()
            assertTrue(r.hooks.all { it in named }, "${r.hooks} not among $named")
            assertTrue("a2a.server.requests" in r.metrics, "${r.metrics}")
        }
    }

    /** The Python binding's venv, when it has our package and OpenTelemetry's SDK. */
    private fun python(): String? {
        val py = "${System.getProperty("a2a.repo")}/bindings-python/.venv/bin/python"
        if (!java.io.File(py).canExecute()) return null
        val probe = ProcessBuilder(py, "-c", "import a2a_native, opentelemetry.sdk.trace, opentelemetry.exporter.otlp.proto.http.trace_exporter")
            .redirectErrorStream(true).start()
        return py.takeIf { probe.waitFor(30, TimeUnit.SECONDS) && probe.exitValue() == 0 }
    }

    @Test
    fun `one trace crosses the Kotlin client, a Python agent on our server, its own span and the webhook`() {
        val py = python()
        org.junit.jupiter.api.Assumptions.assumeTrue(py != null, "no Python venv with a2a_native and the OpenTelemetry SDK")
        Receiver().use { r ->
            val agent = ProcessBuilder(py, "${System.getProperty("a2a.repo")}/tests/otlp/python_agent.py").apply {
                environment()["OTEL_EXPORTER_OTLP_ENDPOINT"] = r.url
                environment()["OTEL_SERVICE_NAME"] = "python-agent"
                environment()["OTEL_BSP_SCHEDULE_DELAY"] = "50"
                redirectError(ProcessBuilder.Redirect.INHERIT)
            }.start()
            try {
                val url = agent.inputStream.bufferedReader().readLine()
                application(r.url, url)
                r.await("agent-work")
                val client = r.one(send, APP_SPAN, "kotlin-agent")
                val request = r.one(send, hex(client.spanId), "python-agent")
                val execute = r.one("a2a.execute", hex(request.spanId), "python-agent")
                val work = r.one("agent-work", hex(execute.spanId), "python-agent-code")
                for (span in listOf(client, request, execute, work)) assertEquals(TRACE_ID, hex(span.traceId))
                assertTrue(r.hooks.isNotEmpty() && r.hooks.all { it!!.startsWith("00-$TRACE_ID-") }, "${r.hooks}")
            } finally {
                agent.outputStream.close()
                agent.destroy()
            }
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

    /** `args`: the agent's URL (`-`: a Kotlin agent's server of its own) and the webhook. */
    @JvmStatic
    fun main(args: Array<String>) = kotlinx.coroutines.runBlocking {
        val (agentUrl, hook) = args
        val w3c = io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator.getInstance()
        io.opentelemetry.api.GlobalOpenTelemetry.set(
            io.opentelemetry.api.OpenTelemetry.propagating(io.opentelemetry.context.propagation.ContextPropagators.create(w3c)),
        )
        useOpenTelemetryContext()
        val options = ServerOptions(security = """{"allowPrivateWebhooks": true}""")
        val card = agentCard("kotlin-agent", "traced").let { it.copy(capabilities = it.capabilities.copy(pushNotifications = true)) }
        val server = if (agentUrl == "-") AgentServer(card, Done(), options).also { it.start() } else null
        val client = Client.connect(server?.url() ?: agentUrl)
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
        server?.stop()
        println("done")
    }
}
