// The benchmark's Kotlin side (run by ../../../../../bench.sh, not a test):
//   client URL N   N sequential SendMessage round trips from the Kotlin client; prints JSON p50/p99.
//   serve          a Kotlin echo executor (artifact, then COMPLETED, like the Rust echo agent)
//                  on a free port; prints its URL and serves until stdin closes.
package a2anative

import kotlinx.coroutines.runBlocking

class BenchEcho : AgentExecutor {
    override suspend fun execute(context: RequestContext, events: EventSink) {
        events.artifact(Artifact(artifactId = "", name = "echo", parts = context.message?.parts ?: listOf()), lastChunk = true)
        events.status(TaskState.COMPLETED)
    }

    override suspend fun cancel(context: RequestContext, events: EventSink) {}
}

fun main(args: Array<String>) = runBlocking {
    when (args[0]) {
        "client" -> {
            val client = Client.connect(args[1])
            val n = args[2].toInt()
            repeat(n / 10) { client.sendText("warm-up") }
            val ms = DoubleArray(n) {
                val t0 = System.nanoTime()
                client.sendText("hello")
                (System.nanoTime() - t0) / 1e6
            }.sorted()
            println("""{"p50_ms":${"%.3f".format(ms[n / 2])},"p99_ms":${"%.3f".format(ms[n * 99 / 100])},"requests":$n}""")
        }
        "serve" -> {
            val server = AgentServer(agentCard("kotlin-bench", "Kotlin echo executor"), BenchEcho(), null)
            server.start()
            println(server.url())
            System.out.flush()
            while (System.`in`.read() >= 0) { /* serve until stdin closes */ }
            server.stop()
        }
    }
}
