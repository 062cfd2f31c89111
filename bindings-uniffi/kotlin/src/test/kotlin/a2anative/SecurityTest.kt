package a2anative

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.io.File

/** Security options through the Kotlin binding: API keys and principals, HTTPS with mutual TLS. */
class SecurityTest {
    private val fixtures = File("../../core/tests/fixtures")

    private fun pem(name: String) = File(fixtures, name).readText()

    /** Completes with the caller's principal name. */
    private class WhoAmI : AgentExecutor {
        override suspend fun execute(context: RequestContext, events: EventSink) {
            events.statusText(TaskState.COMPLETED, context.principal ?: "anonymous")
        }

        override suspend fun cancel(context: RequestContext, events: EventSink) {}
    }

    private fun A2aTask.answer() = status.message!!.text

    @Test
    fun `API keys name the principal that owns the task`() = test {
        val security = """{"apiKeys": {"k-ada": "ada", "k-bob": "bob"}}"""
        serving(WhoAmI(), ServerOptions(securityJson = security)) { server ->
            val anonymous = Client.connect(server.url()!!)
            assertEquals("UnauthenticatedError", assertThrows<A2aException> { anonymous.sendText("x") }.errorName)
            val ada = Client.connect(server.url()!!, ClientOptions(apiKeyHeader = "X-API-Key", apiKey = "k-ada"))
            val task = ada.sendText("x").task!!
            assertEquals("ada", task.answer())
            val bob = Client.connect(server.url()!!, ClientOptions(apiKeyHeader = "X-API-Key", apiKey = "k-bob"))
            assertEquals(-32001, assertThrows<A2aException> { bob.getTask(task.id) }.code)
        }
    }

    @Test
    fun `HTTPS with a client certificate`() = test {
        val tls = """{"tls": {"cert": "${File(fixtures, "tls-server.pem").absolutePath}",
            "key": "${File(fixtures, "tls-server.key").absolutePath}", "clientCa": "${File(fixtures, "tls-ca.pem").absolutePath}"}}"""
        serving(WhoAmI(), ServerOptions(securityJson = tls)) { server ->
            val url = server.url()!!
            assertTrue(url.startsWith("https://"), url)
            val identity = pem("tls-client.pem") + pem("tls-client.key")
            val client = Client.connect(url, ClientOptions(caCertPem = pem("tls-ca.pem"), clientIdentityPem = identity))
            assertTrue(client.sendText("x").task!!.answer().startsWith("cert:"))
        }
    }

    @Test
    fun `bad security options are refused at construction`() = test {
        val e = assertThrows<A2aException> { AgentServer(agentCard("a", "d"), WhoAmI(), ServerOptions(securityJson = """{"apiKeyz": {}}""")) }
        assertEquals(-32602, e.code)
    }
}
