// Two servers on one PostgreSQL database act as one agent: a subscriber on B follows a task
// that runs on A, and a cancel on B stops A's coroutine and ends every stream CANCELED.
// tests/pg.sh provides the database under tests/run-all.sh (A2A_TEST_POSTGRES_URL);
// A2A_REQUIRE_POSTGRES=1 makes its absence a failure.
package a2anative

import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.fail
import java.util.Collections

/** "hold": working, then waits until canceled (records that it saw it); "steps": working,
 *  waits for `go` (bounded), two artifact chunks with short sleeps, completed. `ran` lists
 *  the texts `execute` was called with. */
class HoldOrSteps : AgentExecutor {
    val ran: MutableList<String> = Collections.synchronizedList(mutableListOf())
    val holding = CompletableDeferred<String>()
    val sawCancel = CompletableDeferred<Boolean>()
    val go = CompletableDeferred<Unit>()

    override suspend fun execute(context: RequestContext, events: EventSink) {
        ran.add(context.text)
        events.status(TaskState.WORKING)
        if (context.text == "hold") {
            holding.complete(context.taskId)
            try {
                delay(30_000)
            } catch (e: CancellationException) {
                sawCancel.complete(true)
                throw e
            }
            return
        }
        withTimeoutOrNull(10_000) { go.await() }
        delay(50)
        events.artifact(Artifact(artifactId = "steps", name = "steps", parts = listOf(textPart("a"))), append = false, lastChunk = false)
        delay(50)
        events.artifact(Artifact(artifactId = "steps", name = "steps", parts = listOf(textPart("b"))), append = true, lastChunk = true)
        events.status(TaskState.COMPLETED)
    }

    override suspend fun cancel(context: RequestContext, events: EventSink) {}
}

class InstancesTest {
    private fun postgresUrl(): String {
        val url = System.getenv("A2A_TEST_POSTGRES_URL")
        if (url.isNullOrEmpty()) {
            if (System.getenv("A2A_REQUIRE_POSTGRES") == "1") fail("A2A_REQUIRE_POSTGRES=1 but A2A_TEST_POSTGRES_URL is not set")
            assumeTrue(false, "no PostgreSQL (set A2A_TEST_POSTGRES_URL)")
        }
        return url!!
    }

    @Test
    fun `two servers on PostgreSQL - subscribe on B to a task on A, cancel on B stops A`() {
        val url = postgresUrl()
        test {
            val onA = HoldOrSteps()
            val onB = HoldOrSteps()
            serving(onA, ServerOptions(store = url)) { a ->
                serving(onB, ServerOptions(store = url)) { b ->
                    val clientA = Client.connect(a.url()!!)
                    val clientB = Client.connect(b.url()!!)
                    fun now(text: String) =
                        SendMessageRequest(message = userMessage(text), configuration = SendMessageConfiguration(returnImmediately = true))

                    // 1. A subscriber on B follows a task that runs on A to its end.
                    val task = clientA.sendMessage(now("steps")).task!!
                    val subB = clientB.subscribeToTask(SubscribeToTaskRequest(id = task.id))
                    val first = subB.next()!!
                    assertEquals(task.id, (first.payload as StreamResponsePayload.Task).task.id)
                    onA.go.complete(Unit)
                    val rest = withTimeout(15_000) { subB.asFlow().toList() }
                    assertEquals(TaskState.COMPLETED, rest.lastOrNull()?.state, rest.toString())
                    val chunks = rest.mapNotNull { (it.payload as? StreamResponsePayload.ArtifactUpdate)?.artifactUpdate?.artifact }
                        .map { a -> a.parts.mapNotNull { (it.content as? PartContent.Text)?.text }.joinToString("") }
                    assertEquals(listOf("a", "b"), chunks, rest.toString())
                    assertEquals(TaskState.COMPLETED, clientB.getTask(task.id).status.state)

                    // 2. A cancel on B stops A's coroutine; the streams on A and on B end CANCELED.
                    val held = clientA.sendMessage(now("hold")).task!!
                    assertEquals(held.id, withTimeout(10_000) { onA.holding.await() })
                    val subs = listOf(clientA, clientB).map { it.subscribeToTask(SubscribeToTaskRequest(id = held.id)) }
                    for (sub in subs) assertEquals(held.id, (sub.next()!!.payload as StreamResponsePayload.Task).task.id)
                    assertEquals(TaskState.CANCELED, clientB.cancelTask(held.id).status.state)
                    for (sub in subs) {
                        val events = withTimeout(15_000) { sub.asFlow().toList() }
                        assertEquals(TaskState.CANCELED, events.lastOrNull()?.state, events.toString())
                    }
                    assertEquals(true, withTimeout(5_000) { onA.sawCancel.await() })
                    assertEquals(TaskState.CANCELED, clientA.getTask(held.id).status.state)
                    assertEquals(listOf("steps", "hold"), onA.ran.toList())
                    assertEquals(listOf<String>(), onB.ran.toList())
                }
            }
        }
    }
}
