// The installed jar, used as the binding's README says: a Kotlin agent on AgentServer, driven by
// Client (send, stream, a typed error). The native library must come from inside the jar.
import a2anative.*
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

class Echo : AgentExecutor {
    override suspend fun execute(context: RequestContext, events: EventSink) {
        events.artifactText("echo", context.text)
        events.status(TaskState.COMPLETED)
    }

    override suspend fun cancel(context: RequestContext, events: EventSink) {}
}

class SmokeTest {
    @Test
    fun `an agent and a client from the installed jar`() = runBlocking {
        withTimeout(60_000) {
            assertNull(System.getProperty("jna.library.path"))
            val server = AgentServer(agentCard("smoke", "echoes"), Echo(), null)
            server.start()
            try {
                val client = Client.connect(server.url()!!)
                val task = client.sendText("hello").task!!
                assertEquals(TaskState.COMPLETED, task.status.state)
                assertEquals("hello", task.artifactText)
                val states = client.streamText("streamed").toList().mapNotNull { it.state }
                assertEquals(TaskState.COMPLETED, states.last())
                val e = assertThrows<A2aException> { client.getTask("no-such-task") }
                assertEquals("TaskNotFoundError", e.errorName)
            } finally {
                server.stop()
                server.destroy()
            }
        }
        // JNA loaded the library it unpacked from the jar, not one from this machine's paths.
        val jar = Client::class.java.protectionDomain.codeSource.location.path
        assertTrue(jar.endsWith("a2a-native-kotlin-0.1.0.jar"), jar)
    }
}
