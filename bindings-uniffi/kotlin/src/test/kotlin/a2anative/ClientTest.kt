// The Kotlin client against the Rust CLI's echo agent (`a2a serve`): every operation, streams
// as Flows, and errors carrying the spec codes.
package a2anative

import kotlinx.coroutines.flow.toList
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.assertThrows

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClientTest {
    private lateinit var server: CliServer

    @BeforeAll
    fun start() {
        server = CliServer("--echo")
    }

    @AfterAll
    fun stop() = server.close()

    private suspend fun client(binding: String = "JSONRPC") =
        Client.connect(server.url, ClientOptions(binding = binding))

    @Test
    fun `send returns the completed echo task`() = test {
        for (binding in listOf("JSONRPC", "HTTP+JSON", "GRPC")) {
            val client = client(binding)
            assertEquals(binding, client.binding())
            val task = client.sendText("hello kotlin").task!!
            assertEquals(TaskState.COMPLETED, task.status.state)
            assertTrue(task.artifactText.contains("hello kotlin"), task.toString())
        }
    }

    @Test
    fun `card is resolved`() = test {
        val card = client().card()
        assertTrue(card.supportedInterfaces.isNotEmpty())
        assertTrue(card.capabilities.streaming == true)
    }

    @Test
    fun `stream collects every event as a Flow`() = test {
        val events = client().streamText("streamed").toList()
        assertTrue(events.isNotEmpty())
        assertEquals(TaskState.COMPLETED, events.last().state)
        assertTrue(events.any { it.payload is StreamResponsePayload.ArtifactUpdate }, events.toString())
    }

    @Test
    fun `get list and cancel tasks`() = test {
        val client = client()
        val task = client.sendText("to list").task!!
        assertEquals(task.id, client.getTask(task.id).id)
        val listed = client.listTasks(ListTasksRequest(contextId = task.contextId))
        assertEquals(listOf(task.id), listed.tasks.map { it.id })
        // A completed task cannot be canceled: the spec's TaskNotCancelableError.
        val e = assertThrows<A2aException> { client.cancelTask(task.id) }
        assertEquals(-32002, e.code)
        assertEquals("TaskNotCancelableError", e.errorName)
    }

    @Test
    fun `allTasks pages through every task of a context`() = test {
        val client = client()
        val first = client.sendText("page one").task!!
        val ids = mutableListOf(first.id)
        repeat(4) { i ->
            val message = userMessage("page ${i + 2}", contextId = first.contextId)
            ids += client.sendMessage(SendMessageRequest(message = message)).task!!.id
        }
        val listed = client.allTasks(ListTasksRequest(contextId = first.contextId, pageSize = 2)).toList()
        assertEquals(ids.toSet(), listed.map { it.id }.toSet())
        assertEquals(5, listed.size)
        // A refused request fails the Flow with the spec's error.
        val e = assertThrows<A2aException> { client.allTasks(ListTasksRequest(pageSize = -1)).toList() }
        assertEquals(-32602, e.code)
    }

    @Test
    fun `subscribe to a finished task is refused`() = test {
        val client = client()
        val task = client.sendText("done").task!!
        val e = assertThrows<A2aException> { client.subscribe(task.id).toList() }
        assertEquals(-32004, e.code)
    }

    @Test
    fun `unknown task is TaskNotFound on every binding`() = test {
        for (binding in listOf("JSONRPC", "HTTP+JSON", "GRPC")) {
            val e = assertThrows<A2aException> { client(binding).getTask("no-such-task") }
            assertEquals(-32001, e.code)
        }
    }

    @Test
    fun `push configs are created listed and deleted`() = test {
        val client = client()
        val task = client.sendText("push").task!!
        val created = client.createPushConfig(
            TaskPushNotificationConfig(taskId = task.id, url = "https://example.com/hook", token = "t"),
        )
        assertEquals(task.id, created.taskId)
        val got = client.getPushConfig(GetTaskPushNotificationConfigRequest(taskId = task.id, id = created.id))
        assertEquals("https://example.com/hook", got.url)
        val listed = client.listPushConfigs(ListTaskPushNotificationConfigsRequest(taskId = task.id))
        assertEquals(listOf(created.id), listed.configs.map { it.id })
        client.deletePushConfig(DeleteTaskPushNotificationConfigRequest(taskId = task.id, id = created.id))
        assertTrue(client.listPushConfigs(ListTaskPushNotificationConfigsRequest(taskId = task.id)).configs.isEmpty())
    }

    @Test
    fun `an unreachable agent is a TransportError`() = test {
        val e = assertThrows<A2aException> { Client.connect("http://127.0.0.1:${freePort()}") }
        assertEquals("TransportError", e.errorName)
    }

    @Test
    fun `an invalid request is refused before it is sent`() = test {
        val bad = SendMessageRequest(message = Message(messageId = "", role = Role.USER, parts = listOf()))
        val e = assertThrows<A2aException> { client().sendMessage(bad) }
        assertEquals(-32602, e.code)
        assertTrue(e.fieldViolations.isNotEmpty())
    }

    @Test
    fun `bad JSON text in a record is a typed error`() = test {
        val message = userMessage("x").copy(metadata = "{not json")
        val e = assertThrows<A2aException> { client().sendMessage(SendMessageRequest(message = message)) }
        assertEquals(-32602, e.code)
        assertEquals("message.metadata", e.fieldViolations.first().field)
    }

    /** Records go into core field by field; each refusal names the JSON path of the field. */
    @Test
    fun `records are refused field by field as their JSON would be`() = test {
        val client = client()
        suspend fun refused(field: String, request: SendMessageRequest) {
            val e = assertThrows<A2aException> { client.sendMessage(request) }
            assertEquals(-32602, e.code, e.toString())
            assertEquals(field, e.fieldViolations.first().field, e.toString())
        }
        val ok = userMessage("x")
        refused("message.metadata", SendMessageRequest(message = ok.copy(metadata = "[1]")))
        refused("message.parts[0]", SendMessageRequest(message = ok.copy(parts = listOf(Part(content = null)))))
        refused("message.parts[1].data", SendMessageRequest(message = ok.copy(parts = ok.parts + Part(PartContent.Data("{")))))
        refused("message.parts[0].url", SendMessageRequest(message = ok.copy(parts = listOf(Part(PartContent.Url(""))))))
        refused("message.role", SendMessageRequest(message = ok.copy(role = Role.UNSPECIFIED)))
        val stamp = assertThrows<A2aException> { client.listTasks(ListTasksRequest(statusTimestampAfter = "yesterday")) }
        assertEquals("statusTimestampAfter", stamp.fieldViolations.first().field)

        // What is accepted comes back whole: bytes, a JSON null data part, metadata, a filter of
        // UNSPECIFIED (no filter, as in JSON).
        val parts = listOf(Part(PartContent.Raw(byteArrayOf(0, 1, -1))), Part(PartContent.Data("null")))
        val task = client.sendMessage(SendMessageRequest(message = ok.copy(parts = parts, metadata = "{\"k\":[1,2]}"))).task!!
        val echoed = task.history.first()
        assertEquals(listOf(0, 1, -1), (echoed.parts[0].content as PartContent.Raw).raw.map { it.toInt() })
        assertEquals("null", (echoed.parts[1].content as PartContent.Data).data)
        assertEquals("{\"k\":[1,2]}", echoed.metadata)
        val listed = client.listTasks(ListTasksRequest(contextId = task.contextId, status = TaskState.UNSPECIFIED))
        assertEquals(listOf(task.id), listed.tasks.map { it.id })
    }
}
