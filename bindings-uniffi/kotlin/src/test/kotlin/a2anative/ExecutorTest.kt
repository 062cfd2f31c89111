// Kotlin executors served by our Rust server: to the Kotlin client, to the Rust CLI client,
// streaming, failures, cancellation and bearer-token auth.
package a2anative

import kotlinx.coroutines.async
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.toList
import org.json.JSONObject
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

class ExecutorTest {
    @Test
    fun `a Kotlin executor answers the Kotlin client`() = test {
        serving(Echo()) { server ->
            val client = Client.connect(server.url()!!)
            val task = client.sendText("from kotlin").task!!
            assertEquals(TaskState.COMPLETED, task.status.state)
            assertEquals("echo: from kotlin", task.artifactText)
            // The executor gave no artifact id: core gave it a fresh UUID.
            assertTrue(Regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}").matches(task.artifacts[0].artifactId), task.toString())
        }
    }

    @Test
    fun `a Kotlin executor streams its events in order`() = test {
        serving(Echo()) { server ->
            val events = Client.connect(server.url()!!).streamText("s").toList()
            val states = events.mapNotNull { it.state }
            assertEquals(TaskState.COMPLETED, states.last())
            assertTrue(states.contains(TaskState.WORKING), states.toString())
            val artifact = events.indexOfFirst { it.payload is StreamResponsePayload.ArtifactUpdate }
            assertTrue(artifact in 1 until events.size - 1, events.toString())
        }
    }

    @Test
    fun `a Kotlin executor is served over gRPC to the Kotlin client`() = test {
        serving(Echo()) { server ->
            val client = Client.connect(server.url()!!, ClientOptions(binding = "GRPC"))
            assertEquals("GRPC", client.binding())
            val task = client.sendText("over grpc").task!!
            assertEquals(TaskState.COMPLETED, task.status.state)
            assertEquals("echo: over grpc", task.artifactText)
            val states = client.streamText("s").toList().mapNotNull { it.state }
            assertEquals(TaskState.COMPLETED, states.last())
        }
    }

    @Test
    fun `a Kotlin executor answers the Rust CLI client`() = test {
        serving(Echo()) { server ->
            val (code, out) = runCommand(A2A_CLI.path, "send", server.url()!!, "from rust", "--json")
            assertEquals(0, code, out)
            val task = JSONObject(out.substring(out.indexOf('{'))).getJSONObject("task")
            assertEquals("TASK_STATE_COMPLETED", task.getJSONObject("status").getString("state"))
            assertTrue(task.toString().contains("echo: from rust"))
        }
    }

    @Test
    fun `events sent whole get the ids they leave empty`() = test {
        val agent = object : AgentExecutor {
            override suspend fun execute(context: RequestContext, events: EventSink) {
                val status = TaskStatusUpdateEvent(taskId = "", contextId = "", status = TaskStatus(state = TaskState.COMPLETED))
                events.send(StreamResponse(StreamResponsePayload.StatusUpdate(status)))
            }
            override suspend fun cancel(context: RequestContext, events: EventSink) {}
        }
        serving(agent) { server ->
            val task = Client.connect(server.url()!!).sendText("x").task!!
            assertEquals(TaskState.COMPLETED, task.status.state)
        }
    }

    @Test
    fun `a direct message reply`() = test {
        val agent = object : AgentExecutor {
            override suspend fun execute(context: RequestContext, events: EventSink) = events.messageText("hi ${context.text}")
            override suspend fun cancel(context: RequestContext, events: EventSink) {}
        }
        serving(agent) { server ->
            val reply = Client.connect(server.url()!!).sendText("you")
            assertEquals("hi you", reply.message!!.text)
        }
    }

    @Test
    fun `an exception fails the task with its message`() = test {
        val agent = object : AgentExecutor {
            override suspend fun execute(context: RequestContext, events: EventSink) = throw IllegalStateException("boom")
            override suspend fun cancel(context: RequestContext, events: EventSink) {}
        }
        serving(agent) { server ->
            val task = Client.connect(server.url()!!).sendText("x").task!!
            assertEquals(TaskState.FAILED, task.status.state)
            assertTrue(task.status.message!!.text.contains("boom"), task.toString())
        }
    }

    @Test
    fun `an Error that is no Exception (TODO(), StackOverflowError) fails the task instead of hanging it`() = test {
        val agent = object : AgentExecutor {
            override suspend fun execute(context: RequestContext, events: EventSink) {
                events.status(TaskState.WORKING)
                if (context.text == "todo") TODO("not written yet") else throw StackOverflowError("too deep")
            }
            override suspend fun cancel(context: RequestContext, events: EventSink) {}
        }
        serving(agent) { server ->
            val client = Client.connect(server.url()!!)
            val todo = client.sendText("todo").task!!
            assertEquals(TaskState.FAILED, todo.status.state)
            assertTrue(todo.status.message!!.text.contains("not written yet"), todo.toString())
            val streamed = client.streamText("deep").toList()
            assertEquals(TaskState.FAILED, streamed.last().state, streamed.toString())
        }
    }

    @Test
    fun `an A2aException from the executor fails the task too`() = test {
        val agent = object : AgentExecutor {
            override suspend fun execute(context: RequestContext, events: EventSink) =
                throw A2aException.Failure(-32603, "InternalError", "INTERNAL", "typed failure", listOf())
            override suspend fun cancel(context: RequestContext, events: EventSink) {}
        }
        serving(agent) { server ->
            val task = Client.connect(server.url()!!).sendText("x").task!!
            assertEquals(TaskState.FAILED, task.status.state)
            assertTrue(task.status.message!!.text.contains("typed failure"), task.toString())
        }
    }

    @Test
    fun `an a2aError thrown before the first event is the caller's error and makes no task`() = test {
        val agent = object : AgentExecutor {
            override suspend fun execute(context: RequestContext, events: EventSink) {
                if (context.text == "late") events.status(TaskState.WORKING)
                throw a2aError("ContentTypeNotSupportedError", "only text/plain is read")
            }
            override suspend fun cancel(context: RequestContext, events: EventSink) {}
        }
        serving(agent) { server ->
            val client = Client.connect(server.url()!!)
            val e = assertThrows<A2aException> { client.sendText("png") }
            assertEquals("ContentTypeNotSupportedError", e.errorName)
            val streamed = assertThrows<A2aException> { client.streamText("png").toList() }
            assertEquals("ContentTypeNotSupportedError", streamed.errorName)
            assertEquals(0, client.listTasks(ListTasksRequest()).tasks.size)
            // After an event the task exists: the error fails it.
            assertEquals(TaskState.FAILED, client.sendText("late").task!!.status.state)
        }
    }

    @Test
    fun `cancel reaches the coroutine and the cancel hook`() = test {
        val agent = Sleeper()
        serving(agent) { server ->
            val client = Client.connect(server.url()!!)
            val reply = client.sendMessage(
                SendMessageRequest(message = userMessage("work"), configuration = SendMessageConfiguration(returnImmediately = true)),
            )
            val taskId = agent.started.await()
            assertEquals(reply.task!!.id, taskId)
            assertEquals(TaskState.CANCELED, client.cancelTask(taskId).status.state)
            assertTrue(agent.coroutineCanceled.await())
            assertEquals(taskId, agent.cancelHook.await())
            assertEquals(TaskState.CANCELED, client.getTask(taskId).status.state)
        }
    }

    @Test
    fun `a subscriber sees the cancellation`() = test {
        val agent = Sleeper()
        serving(agent) { server ->
            val client = Client.connect(server.url()!!)
            val stream = client.sendStreamingMessage(SendMessageRequest(message = userMessage("work")))
            val taskId = agent.started.await()
            // The task exists once its first event is applied; the stream's first event says so
            // (the executor's `started` signal can come before the manager applied its status).
            val first = stream.next()!!
            assertEquals(taskId, (first.payload as StreamResponsePayload.Task).task.id)
            client.cancelTask(taskId)
            val last = stream.asFlow().toList().last()
            assertEquals(TaskState.CANCELED, last.state)
        }
    }

    @Test
    fun `leaving a Flow early ends the stream`() = test {
        val agent = Sleeper()
        serving(agent) { server ->
            val client = Client.connect(server.url()!!)
            val first = client.streamText("work").first()
            val taskId = (first.payload as StreamResponsePayload.Task).task.id
            // The task goes on after the stream is closed.
            assertEquals(TaskState.WORKING, client.getTask(taskId).status.state)
            client.cancelTask(taskId)
        }
    }

    @Test
    fun `bearer tokens are required and sent`() = test {
        var asked = 0
        val provider = object : CredentialProvider {
            override suspend fun headers(method: String, url: String): Map<String, String> {
                asked++
                return mapOf("Authorization" to "Bearer s3cret")
            }
        }
        serving(Echo(), ServerOptions(bearerTokens = listOf("s3cret"))) { server ->
            val anonymous = Client.connect(server.url()!!)
            val e = assertThrows<A2aException> { anonymous.sendText("x") }
            assertEquals("UnauthenticatedError", e.errorName)
            val withToken = Client.connect(server.url()!!, ClientOptions(bearerToken = "s3cret"))
            assertEquals(TaskState.COMPLETED, withToken.sendText("x").task!!.status.state)
            val withProvider = Client.connect(server.url()!!, ClientOptions(credentials = provider))
            assertEquals(TaskState.COMPLETED, withProvider.sendText("x").task!!.status.state)
            assertTrue(asked > 0)
        }
    }

    @Test
    fun `strictV1Card serves the 1_0 card without the 0_3 fields a 0_3 interface adds`() = test {
        val interfaces = listOf("1.0", "0.3").map { AgentInterface(url = "http://127.0.0.1:9/", protocolBinding = "JSONRPC", protocolVersion = it) }
        val card = agentCard("kotlin-agent", "An agent written in Kotlin").copy(supportedInterfaces = interfaces)
        for (strict in listOf(false, true)) {
            val server = AgentServer(card, Echo(), ServerOptions(strictV1Card = strict))
            server.start()
            try {
                val served = JSONObject(java.net.URI("${server.url()!!}/.well-known/agent-card.json").toURL().readText())
                assertEquals(!strict, served.has("protocolVersion"), served.toString())
                assertEquals(!strict, served.has("preferredTransport"))
                assertEquals(2, served.getJSONArray("supportedInterfaces").length())
            } finally {
                server.stop()
                server.destroy()
            }
        }
    }

    @Test
    fun `sendText continues a task by its ids (multi-turn)`() = test {
        val asker = object : AgentExecutor {
            override suspend fun execute(context: RequestContext, events: EventSink) {
                if (context.task == null) events.statusText(TaskState.INPUT_REQUIRED, "your name?")
                else events.statusText(TaskState.COMPLETED, "hello ${context.text}")
            }
            override suspend fun cancel(context: RequestContext, events: EventSink) {}
        }
        val server = AgentServer(agentCard("kotlin-agent", "An agent written in Kotlin"), asker, null)
        server.start()
        try {
            val client = Client.connect(server.url()!!)
            val asked = client.sendText("hi").task!!
            assertEquals(TaskState.INPUT_REQUIRED, asked.status.state)
            val done = client.sendText("Ada", taskId = asked.id, contextId = asked.contextId).task!!
            assertEquals(asked.id, done.id)
            assertEquals(TaskState.COMPLETED, done.status.state)
            // The same over a stream: its last event completes the task asked in it.
            val second = client.sendText("hi").task!!
            val events = client.streamText("Bob", taskId = second.id, contextId = second.contextId).toList()
            assertEquals(TaskState.COMPLETED, (events.last().payload as StreamResponsePayload.StatusUpdate).statusUpdate.status.state)
        } finally {
            server.stop()
            server.destroy()
        }
    }

    /** Started in a function that keeps only its URL: the object is garbage, the server serves on. */
    private suspend fun startAndForget(): String {
        val server = AgentServer(agentCard("kotlin-agent", "An agent written in Kotlin"), Echo(), null)
        server.start()
        return server.url()!!
    }

    @Test
    fun `a started server serves until stop, whether or not its object is kept`() = test {
        val url = startAndForget()
        repeat(3) {
            System.gc()
            Thread.sleep(100)
        }
        val client = Client.connect(url)
        repeat(5) { assertEquals(TaskState.COMPLETED, client.sendText("still there").task!!.status.state) }
    }

    @Test
    fun `corsOrigins let web pages of those origins call the agent`() = test {
        val page = "http://localhost:5173"
        val server = AgentServer(agentCard("kotlin-agent", "An agent written in Kotlin"), Echo(), ServerOptions(corsOrigins = listOf(page)))
        server.start()
        try {
            // java.net.http: HttpURLConnection drops an Origin header (a restricted one there).
            val http = java.net.http.HttpClient.newHttpClient()
            val preflight = { origin: String ->
                val request = java.net.http.HttpRequest.newBuilder(java.net.URI("${server.url()!!}/"))
                    .method("OPTIONS", java.net.http.HttpRequest.BodyPublishers.noBody())
                    .header("Origin", origin)
                    .header("Access-Control-Request-Method", "POST")
                    .build()
                val resp = http.send(request, java.net.http.HttpResponse.BodyHandlers.discarding())
                resp.statusCode() to resp.headers().firstValue("Access-Control-Allow-Origin").orElse(null)
            }
            assertEquals(204 to page, preflight(page))
            assertEquals(403 to null, preflight("https://elsewhere.example"))
        } finally {
            server.stop()
            server.destroy()
        }
        val e = assertThrows<A2aException> { AgentServer(agentCard("kotlin-agent", "x"), Echo(), ServerOptions(corsOrigins = listOf("https://app.example.com/"))) }
        assertEquals("InvalidParamsError", e.errorName)
    }

    @Test
    fun `metricsAddress serves the requests by binding, method and outcome at metricsUrl`() = test {
        val server = AgentServer(agentCard("kotlin-agent", "An agent written in Kotlin"), Echo(), ServerOptions(metricsAddress = "127.0.0.1:0"))
        assertEquals(null, server.metricsUrl())
        server.start()
        try {
            val url = server.metricsUrl()!!
            assertTrue(Regex("""http://127\.0\.0\.1:\d+/metrics""").matches(url), url)
            val client = Client.connect(server.url()!!)
            assertEquals(TaskState.COMPLETED, client.sendText("hello").task!!.status.state)
            val connection = java.net.URI(url).toURL().openConnection()
            assertTrue(connection.contentType.startsWith("application/openmetrics-text"), connection.contentType)
            val text = connection.getInputStream().bufferedReader().readText()
            assertTrue(text.contains("""a2a_server_requests_total{binding="jsonrpc",method="SendMessage",outcome="OK"} 1"""), text)
            assertTrue(text.endsWith("# EOF\n"))
        } finally {
            server.stop()
            server.destroy()
        }
    }

    @Test
    fun `the caller's trace context reaches the executor`() = test {
        val seen = mutableListOf<Pair<String?, String?>>()
        val agent = object : AgentExecutor {
            override suspend fun execute(context: RequestContext, events: EventSink) {
                seen.add(context.traceparent to context.tracestate)
                events.status(TaskState.COMPLETED)
            }
            override suspend fun cancel(context: RequestContext, events: EventSink) {}
        }
        val server = AgentServer(agentCard("kotlin-agent", "An agent written in Kotlin"), agent, null)
        server.start()
        try {
            val traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
            Client.connect(server.url()!!, ClientOptions(headers = mapOf("traceparent" to traceparent, "tracestate" to "v=1"))).sendText("traced")
            Client.connect(server.url()!!).sendText("plain")
            assertEquals(listOf(traceparent to "v=1", null to null), seen)
        } finally {
            server.stop()
            server.destroy()
        }
    }

    @Test
    fun `an invalid card is refused at construction`() = test {
        val card = agentCard("", "no name")
        val e = assertThrows<A2aException> { AgentServer(card, Echo(), null) }
        assertEquals(-32602, e.code)
    }
}

class ExecutorTimeoutTest {
    private class Stuck : AgentExecutor {
        override suspend fun execute(context: RequestContext, events: EventSink) {
            events.status(TaskState.WORKING)
            kotlinx.coroutines.awaitCancellation()
        }
        override suspend fun cancel(context: RequestContext, events: EventSink) {}
    }

    @Test
    fun `an executor that never returns ends FAILED at executorTimeout, and the server goes on`() = test {
        serving(Stuck(), ServerOptions(limits = ServerLimits(executorTimeout = java.time.Duration.ofMillis(300)))) { server ->
            val client = Client.connect(server.url()!!)
            repeat(2) {
                val task = client.sendText("hi").task!!
                assertEquals(TaskState.FAILED, task.status.state)
                assertTrue(task.status.message!!.text.contains("did not return within 0.3 s"), task.status.toString())
            }
        }
    }

    @Test
    fun `stop ends a stream that another coroutine is waiting on`() = test {
        serving(Stuck(), ServerOptions()) { server ->
            val client = Client.connect(server.url()!!)
            val stream = client.sendStreamingMessage(textRequest("hi"))
            // The task, then WORKING; then nothing, for ever.
            while (stream.next()?.state != TaskState.WORKING) {}
            kotlinx.coroutines.coroutineScope {
                val waiting = async { stream.next() }
                kotlinx.coroutines.delay(100)
                assertTrue(!waiting.isCompleted)
                kotlinx.coroutines.withTimeout(2000) { stream.stop() }
                assertEquals(null, kotlinx.coroutines.withTimeout(2000) { waiting.await() })
            }
        }
    }

    @Test
    fun `durations are java time Durations, and a zero one is refused by core's name for it`() = test {
        val refused = assertThrows<A2aException> {
            AgentServer(agentCard("t", "t"), Stuck(), ServerOptions(limits = ServerLimits(executorTimeout = java.time.Duration.ZERO)))
        }
        assertEquals(-32602, refused.code)
        assertTrue(refused.message!!.contains("limits.executorTimeout"), refused.message)
        val idle = assertThrows<A2aException> {
            AgentServer(agentCard("t", "t"), Stuck(), ServerOptions(limits = ServerLimits(idleTimeout = java.time.Duration.ZERO)))
        }
        assertTrue(idle.message!!.contains("limits.idleTimeout"), idle.message)
        val head = assertThrows<A2aException> {
            AgentServer(agentCard("t", "t"), Stuck(), ServerOptions(limits = ServerLimits(headerReadTimeout = java.time.Duration.ZERO)))
        }
        assertTrue(head.message!!.contains("limits.headerReadTimeout"), head.message)
        val options = ServerOptions(
            limits = ServerLimits(
                headerReadTimeout = java.time.Duration.ofSeconds(10),
                blockingTimeout = java.time.Duration.ofSeconds(2),
                bodyReadTimeout = java.time.Duration.ofMillis(1500),
                idleTimeout = java.time.Duration.ofSeconds(30),
            ),
            taskRetention = java.time.Duration.ofMinutes(5),
        )
        serving(Stuck(), options) { server ->
            val client = Client.connect(server.url()!!, ClientOptions(timeout = java.time.Duration.ofSeconds(5)))
            // blockingTimeout answers a blocking SendMessage with the task as it stands.
            assertEquals(TaskState.WORKING, client.sendText("hi").task!!.status.state)
        }
    }
}

/** The Timestamp extension of the A2A samples: activated by the executor only when the client
 * asks for it, and then echoed in the response's A2A-Extensions (declared is not enough). */
class ExtensionActivationTest {
    private val timestamp = "https://github.com/a2aproject/a2a-samples/samples/extensions/timestamp/v1"
    private val unused = "https://example.com/ext/declared-but-never-used/v1"

    private class Stamping(val uri: String) : AgentExecutor {
        override suspend fun execute(context: RequestContext, events: EventSink) {
            val stamped = events.activateExtension(uri)
            events.statusText(TaskState.COMPLETED, if (stamped) "stamped" else "plain")
        }
        override suspend fun cancel(context: RequestContext, events: EventSink) {}
    }

    private fun post(url: String, extensions: String?): java.net.http.HttpResponse<String> {
        val body = """{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"hi"}]}}}"""
        val request = java.net.http.HttpRequest.newBuilder(java.net.URI("$url/"))
            .header("content-type", "application/json").header("a2a-version", "1.0")
            .apply { if (extensions != null) header("a2a-extensions", extensions) }
            .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body)).build()
        return java.net.http.HttpClient.newHttpClient().send(request, java.net.http.HttpResponse.BodyHandlers.ofString())
    }

    @Test
    fun `a Kotlin executor activates an extension it was asked for, and only that is echoed`() = test {
        val card = agentCard("stamping", "stamps").let {
            it.copy(capabilities = it.capabilities.copy(extensions = listOf(AgentExtension(uri = timestamp), AgentExtension(uri = unused))))
        }
        val server = AgentServer(card, Stamping(timestamp), null)
        server.start()
        try {
            val asked = post(server.url()!!, "$timestamp, $unused")
            assertEquals(timestamp, asked.headers().firstValue("a2a-extensions").orElse(null))
            assertTrue(asked.body().contains("stamped"), asked.body())
            val notAsked = post(server.url()!!, unused)
            assertTrue(notAsked.headers().firstValue("a2a-extensions").isEmpty, notAsked.headers().toString())
            assertTrue(notAsked.body().contains("plain"), notAsked.body())
        } finally {
            server.stop()
            server.destroy()
        }
    }
}
