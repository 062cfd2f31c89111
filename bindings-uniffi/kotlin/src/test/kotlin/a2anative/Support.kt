// Shared test fixtures: the repo paths, the `a2a` CLI as a server or client process, and small
// Kotlin executors.
package a2anative

import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import java.io.File
import java.net.ServerSocket
import java.net.Socket
import java.util.concurrent.TimeUnit

val REPO: File = File(System.getProperty("a2a.repo") ?: "../..").canonicalFile
val A2A_CLI: File = File(REPO, "target/debug/a2a")
val VECTORS: File = File(REPO, "tests/vectors")

/** Every test body runs under a deadline, so a hang fails instead of stalling the build. */
fun test(body: suspend () -> Unit) = runBlocking { withTimeout(30_000) { body() } }

fun freePort(): Int = ServerSocket(0).use { it.localPort }

/** `a2a serve` (the Rust echo agent) on a free port, in memory. */
class CliServer(vararg extra: String) : AutoCloseable {
    val port = freePort()
    val url = "http://127.0.0.1:$port"
    private val process = ProcessBuilder(
        listOf(A2A_CLI.path, "serve", "--store", "memory", "--port", "$port") + extra,
    ).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start()

    init {
        val deadline = System.nanoTime() + 20_000_000_000
        while (true) {
            check(process.isAlive) { "a2a serve exited with ${process.exitValue()}" }
            if (runCatching { Socket("127.0.0.1", port).close() }.isSuccess) break
            check(System.nanoTime() < deadline) { "a2a serve did not start" }
            Thread.sleep(20)
        }
    }

    override fun close() {
        process.destroy()
        process.waitFor(5, TimeUnit.SECONDS)
    }
}

/** Runs a command, returns (exit code, stdout+stderr). */
fun runCommand(vararg cmd: String, timeoutSeconds: Long = 60): Pair<Int, String> {
    val p = ProcessBuilder(*cmd).redirectErrorStream(true).start()
    val out = p.inputStream.bufferedReader().readText()
    check(p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) { "${cmd.joinToString(" ")} timed out" }
    return p.exitValue() to out
}

/** Replies with an artifact echoing the text, then completes. */
class Echo : AgentExecutor {
    override suspend fun execute(context: RequestContext, events: EventSink) {
        events.statusText(TaskState.WORKING, "working")
        events.artifactText("echo", "echo: ${context.text}")
        events.status(TaskState.COMPLETED)
    }

    override suspend fun cancel(context: RequestContext, events: EventSink) {}
}

/** Works until canceled; records what the coroutine saw. */
class Sleeper : AgentExecutor {
    val started = CompletableDeferred<String>()
    val coroutineCanceled = CompletableDeferred<Boolean>()
    val cancelHook = CompletableDeferred<String>()

    override suspend fun execute(context: RequestContext, events: EventSink) {
        events.status(TaskState.WORKING)
        started.complete(context.taskId)
        try {
            delay(60_000)
        } catch (e: kotlinx.coroutines.CancellationException) {
            coroutineCanceled.complete(true)
            throw e
        }
    }

    override suspend fun cancel(context: RequestContext, events: EventSink) {
        cancelHook.complete(context.taskId)
    }
}

/** Takes a new task to the state its message names ("park TASK_STATE_X") and holds it there;
 *  a later message on the task completes it. */
class Parker : AgentExecutor {
    override suspend fun execute(context: RequestContext, events: EventSink) {
        if (context.task != null) {
            events.statusText(TaskState.COMPLETED, "done")
            return
        }
        val state = TaskState.valueOf(context.text.removePrefix("park TASK_STATE_"))
        events.status(state)
        if (state == TaskState.SUBMITTED || state == TaskState.WORKING) delay(60_000)
    }

    override suspend fun cancel(context: RequestContext, events: EventSink) {}
}

/** An AgentServer for `executor`, started on a free port and stopped after `body`. */
suspend fun <T> serving(
    executor: AgentExecutor,
    options: ServerOptions? = null,
    card: AgentCard = agentCard("kotlin-agent", "An agent written in Kotlin"),
    body: suspend (AgentServer) -> T,
): T {
    val server = AgentServer(card, executor, options)
    server.start()
    try {
        return body(server)
    } finally {
        server.stop()
        server.destroy()
    }
}
