// The core's log events reach the JVM: the sink the host sets, or java.util.logging; and an
// executor's event that no task would take is refused to the executor, not only logged.
package a2anative

import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.awaitCancellation
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.logging.Handler
import java.util.logging.Level
import java.util.logging.LogRecord
import java.util.logging.Logger

class LoggingTest {
    /** Works until canceled; its cancel hook throws, which the core logs as a warning. */
    private class FailingCancel : AgentExecutor {
        val started = CompletableDeferred<String>()
        override suspend fun execute(context: RequestContext, events: EventSink) {
            events.status(TaskState.WORKING, null)
            started.complete(context.taskId)
            awaitCancellation()
        }
        override suspend fun cancel(context: RequestContext, events: EventSink) {
            throw IllegalStateException("cancel hook boom")
        }
    }

    /** Starts a task on [agent], cancels it, and returns once it is CANCELED. */
    private suspend fun cancelOne(agent: FailingCancel) = serving(agent) { server ->
        val client = Client.connect(server.url()!!)
        client.sendMessage(
            SendMessageRequest(message = userMessage("work"), configuration = SendMessageConfiguration(returnImmediately = true)),
        )
        assertEquals(TaskState.CANCELED, client.cancelTask(agent.started.await()).status.state)
    }

    @Test
    fun `core warnings reach the sink the host sets, above its level only`() = test {
        val seen = ConcurrentLinkedQueue<Triple<String, LogLevel, String>>()
        val sink = object : LogSink {
            override fun log(logger: String, level: LogLevel, text: String) {
                seen.add(Triple(logger, level, text))
            }
        }
        setLogSink(sink, LogLevel.WARN)
        try {
            cancelOne(FailingCancel())
        } finally {
            setLogSink(null, LogLevel.WARN)
        }
        val warning = seen.firstOrNull { it.third.contains("cancel hook boom") }
        assertNotNull(warning, seen.toString())
        assertEquals(LogLevel.WARN, warning!!.second)
        assertTrue(warning.first.startsWith("a2a_native."), warning.first)
        assertTrue(seen.none { it.second == LogLevel.INFO || it.second == LogLevel.DEBUG }, seen.toString())
    }

    @Test
    fun `a sink that throws, or that sets another sink, breaks nothing`() = test {
        val thrower = object : LogSink {
            override fun log(logger: String, level: LogLevel, text: String) = throw IllegalStateException("sink boom")
        }
        val seen = ConcurrentLinkedQueue<String>()
        val after = object : LogSink {
            override fun log(logger: String, level: LogLevel, text: String) { seen.add(text) }
        }
        // Swaps itself out from inside a log call (the sink's lock is not held meanwhile).
        val swapper = object : LogSink {
            override fun log(logger: String, level: LogLevel, text: String) = setLogSink(after, LogLevel.WARN)
        }
        try {
            setLogSink(thrower, LogLevel.WARN)
            cancelOne(FailingCancel()) // asserts the task still ends CANCELED
            setLogSink(swapper, LogLevel.WARN)
            cancelOne(FailingCancel())
            cancelOne(FailingCancel())
        } finally {
            setLogSink(null, LogLevel.WARN)
        }
        assertTrue(seen.any { it.contains("cancel hook boom") }, seen.toString())
    }

    @Test
    fun `a2aError of a name no error has is InternalError, and says so in the log`() = test {
        val seen = ConcurrentLinkedQueue<String>()
        setLogSink(object : LogSink {
            override fun log(logger: String, level: LogLevel, text: String) { seen.add("$level $text") }
        }, LogLevel.WARN)
        try {
            assertEquals("TaskNotFoundError", a2aError("TaskNotFoundError", "x").errorName)
            assertTrue(seen.isEmpty(), seen.toString())
            assertEquals("InternalError", a2aError("TaskNotFoundErr", "x").errorName)
        } finally {
            setLogSink(null, LogLevel.WARN)
        }
        assertTrue(seen.any { it.startsWith("WARN") && it.contains("TaskNotFoundErr") }, seen.toString())
    }

    @Test
    fun `useJavaLogging hands them to java util logging`() = test {
        val root = Logger.getLogger("a2a_native") // held: JUL forgets unreferenced loggers
        val records = ConcurrentLinkedQueue<LogRecord>()
        val handler = object : Handler() {
            override fun publish(record: LogRecord) { records.add(record) }
            override fun flush() {}
            override fun close() {}
        }
        root.addHandler(handler)
        try {
            useJavaLogging()
            cancelOne(FailingCancel())
        } finally {
            root.removeHandler(handler)
            setLogSink(null, LogLevel.WARN)
        }
        val record = records.firstOrNull { it.message.contains("cancel hook boom") }
        assertNotNull(record, records.map { it.message }.toString())
        assertEquals(Level.WARNING, record!!.level)
        assertTrue(record.loggerName.startsWith("a2a_native."), record.loggerName)
    }

    @Test
    fun `an event naming another task is refused to the executor and the task fails with why`() = test {
        val refusal = CompletableDeferred<A2aException>()
        val agent = object : AgentExecutor {
            override suspend fun execute(context: RequestContext, events: EventSink) {
                val stale = TaskStatusUpdateEvent(
                    taskId = "stale-task-id", contextId = context.contextId, status = TaskStatus(state = TaskState.COMPLETED),
                )
                try {
                    events.send(StreamResponse(payload = StreamResponsePayload.StatusUpdate(stale)))
                } catch (e: A2aException) {
                    refusal.complete(e)
                    throw e
                }
            }
            override suspend fun cancel(context: RequestContext, events: EventSink) {}
        }
        serving(agent) { server ->
            val task = Client.connect(server.url()!!).sendText("x").task!!
            val e = refusal.await()
            assertEquals("InvalidParamsError", e.errorName)
            assertEquals(TaskState.FAILED, task.status.state, task.toString())
            assertTrue(task.status.message!!.text.contains("stale-task-id"), task.toString())
        }
    }
}
