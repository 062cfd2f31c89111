// Extension methods and profile checks written in Kotlin, served by our Rust server and called
// by the Kotlin client (and over HTTP+JSON by a plain HTTP client).
package a2anative

import org.json.JSONObject
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

class ExtensionsTest {
    private val search = "https://example.com/ext/task-search/v1"
    private val audit = "https://example.com/ext/audit/v1"
    private val structured = "https://example.com/ext/structured-input/v1"

    private val card = agentCard("extended", "serves extension methods").let {
        it.copy(capabilities = it.capabilities.copy(extensions = listOf(
            AgentExtension(uri = search),
            AgentExtension(uri = audit, required = true),
            AgentExtension(uri = structured),
        )))
    }

    private var seen: MethodContext? = null

    private val options = ServerOptions(
        bearerTokenPrincipals = mapOf("alice-token" to "alice"),
        methods = listOf(
            extensionMethod("tasks/search", search) { params, context ->
                seen = context
                when (val query = JSONObject(params).getString("query")) {
                    "missing" -> throw a2aError("TaskNotFoundError", "no task matches $query")
                    "boom" -> error("the index is down")
                    else -> JSONObject(mapOf("query" to query, "ids" to listOf("t-1", "t-2"))).toString()
                }
            },
            extensionMethod("audit/log", audit, path = "/audit:log") { _, context -> "\"logged for ${context.principal}\"" },
        ),
        profileChecks = listOf(
            profileCheck(structured) { message ->
                if (message.parts.any { it.content is PartContent.Data }) null else "every message carries a DataPart"
            },
        ),
    )

    private suspend fun <T> served(body: suspend (AgentServer) -> T): T = serving(Echo(), options, card, body)

    private fun clientOptions(vararg extensions: String, binding: String? = null) =
        ClientOptions(bearerToken = "alice-token", extensions = extensions.toList(), binding = binding)

    @Test
    fun `the Kotlin client calls a Kotlin extension method over every binding, and it sees the call`() = test {
        served { server ->
            for (binding in listOf("JSONRPC", "HTTP+JSON", "GRPC")) {
                val client = Client.connect(server.url()!!, clientOptions(audit, binding = binding))
                assertEquals(binding, client.binding())
                seen = null
                val reply = client.call("tasks/search", """{"query":"open"}""", listOf(search))
                assertEquals(listOf("t-1", "t-2"), JSONObject(reply.resultJson).getJSONArray("ids").map { it as String })
                assertTrue(search in reply.activated, "$binding: ${reply.activated}")
                val context = seen!!
                assertEquals("tasks/search" to search, context.method to context.extension)
                assertEquals("alice", context.principal)
                assertTrue(search in context.extensions, context.extensions.toString())
                client.destroy()
            }
        }
    }

    @Test
    fun `a handler's A2A error reaches the client typed, any other exception is InternalError`() = test {
        served { server ->
            val client = Client.connect(server.url()!!, clientOptions(audit))
            val missing = assertThrows<A2aException> { client.call("tasks/search", """{"query":"missing"}""") }
            assertEquals(-32001, missing.code)
            assertTrue(missing.message!!.contains("no task matches missing"), missing.message)
            val boom = assertThrows<A2aException> { client.call("tasks/search", """{"query":"boom"}""") }
            assertEquals("InternalError", boom.errorName)
            val unknown = assertThrows<A2aException> { client.call("tasks/nothing", "{}") }
            assertEquals(-32601, unknown.code)
        }
    }

    @Test
    fun `a required extension must be activated, and the method is served over HTTP+JSON too`() = test {
        served { server ->
            val client = Client.connect(server.url()!!, ClientOptions(bearerToken = "alice-token"))
            val refused = assertThrows<A2aException> { client.call("tasks/search", """{"query":"q"}""") }
            assertEquals("ExtensionSupportRequiredError", refused.errorName)
            // A plain HTTP client posts to the method's declared path under the HTTP+JSON base.
            val base = client.card().supportedInterfaces.first { it.protocolBinding == "HTTP+JSON" }.url
            val request = java.net.http.HttpRequest.newBuilder(java.net.URI("$base/audit:log"))
                .header("content-type", "application/json").header("a2a-version", "1.0")
                .header("authorization", "Bearer alice-token").header("a2a-extensions", audit)
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{}")).build()
            val resp = java.net.http.HttpClient.newHttpClient().send(request, java.net.http.HttpResponse.BodyHandlers.ofString())
            assertEquals(200 to "\"logged for alice\"", resp.statusCode() to resp.body())
            assertEquals(audit, resp.headers().firstValue("a2a-extensions").orElse(null))
        }
    }

    @Test
    fun `a profile check refuses a message that breaks its rule, only when the extension is asked for`() = test {
        served { server ->
            val asking = Client.connect(server.url()!!, clientOptions(audit, structured))
            val refused = assertThrows<A2aException> { asking.sendText("plain text only") }
            assertEquals(-32602, refused.code)
            assertTrue(refused.message!!.contains(structured) && refused.message!!.contains("DataPart"), refused.message)
            val data = Part(content = PartContent.Data("""{"n":1}"""))
            val message = Message(messageId = uuidV4(), role = Role.USER, parts = listOf(textPart("with data"), data))
            val ok = asking.sendMessage(SendMessageRequest(message = message))
            assertEquals(TaskState.COMPLETED, ok.task!!.status.state)
            // Not asked for: the rule does not apply.
            val plain = Client.connect(server.url()!!, clientOptions(audit)).sendText("plain text only")
            assertEquals(TaskState.COMPLETED, plain.task!!.status.state)
        }
    }

    @Test
    fun `declarations the card does not back are refused when the server is made`() {
        val undeclared = ServerOptions(methods = listOf(extensionMethod("x/y", "urn:nobody-declares-this") { _, _ -> "null" }))
        val e = assertThrows<A2aException> { AgentServer(card, Echo(), undeclared) }
        assertEquals(-32602, e.code)
        val core = ServerOptions(methods = listOf(extensionMethod("SendMessage", search) { _, _ -> "null" }))
        assertThrows<A2aException> { AgentServer(card, Echo(), core) }
        val profile = ServerOptions(profileChecks = listOf(profileCheck("urn:nobody-declares-this") { null }))
        assertThrows<A2aException> { AgentServer(card, Echo(), profile) }
    }
}
