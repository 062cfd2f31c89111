// tests/vectors/scenario through the Kotlin binding: a scripted Kotlin executor hosted by our
// server, driven by our Kotlin client (send and stream); the reply and the event sequence must be
// the ones the vector gives, turn after turn on the same task where a case continues (`next`), as
// in core and every binding.
package a2anative

import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.delay
import org.json.JSONArray
import org.json.JSONObject
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.io.File

class ScenarioTest {
    private val cases: List<JSONObject> = JSONObject(File(VECTORS, "scenario/basic.json").readText())
        .getJSONArray("cases").let { a -> (0 until a.length()).map { a.getJSONObject(it) } }

    /** A case and the turns that continue it. */
    private fun turns(case: JSONObject): List<JSONObject> = generateSequence(case) { it.optJSONObject("next") }.toList()

    private val steps: Map<String, JSONArray> = cases.flatMap { turns(it) }.associate { it.getString("name") to it.getJSONArray("steps") }

    /** The history of the task the message continues, as the vectors write it. */
    private fun history(context: RequestContext): String =
        context.task?.history.orEmpty().joinToString("|") { "${it.role.name.lowercase()}:${texts(it.parts)}" }

    /** Plays the steps of the turn the message names (its text is the turn's name). */
    inner class Scripted : AgentExecutor {
        override suspend fun execute(context: RequestContext, events: EventSink) {
            val steps = steps.getValue(context.text)
            for (i in 0 until steps.length()) {
                val step = steps.getJSONObject(i)
                when {
                    step.has("status") -> {
                        val state = TaskState.valueOf(step.getString("status").uppercase())
                        if (step.has("text")) events.statusText(state, step.getString("text")) else events.status(state, null)
                    }
                    step.has("artifact") -> events.artifact(
                        Artifact(artifactId = step.optString("id", ""), parts = listOf(textPart(step.getString("artifact")))),
                        step.optBoolean("append", false),
                        step.optBoolean("lastChunk", false),
                    )
                    step.has("history") -> events.artifact(Artifact(artifactId = "", parts = listOf(textPart(history(context)))), false, false)
                    step.has("message") -> events.messageText(step.getString("message"))
                    step.has("sleepMs") -> delay(step.getLong("sleepMs"))
                    step.has("raise") -> throw IllegalStateException(step.getString("raise"))
                    step.has("waitForCancel") -> awaitCancellation()
                    else -> error("unknown step $step")
                }
            }
        }

        override suspend fun cancel(context: RequestContext, events: EventSink) {}
    }

    private fun short(state: TaskState) = state.name.lowercase()

    private fun texts(parts: List<Part>?) = parts.orEmpty().mapNotNull { (it.content as? PartContent.Text)?.text }.joinToString("")

    private fun event(e: StreamResponse): JSONObject = when (val p = e.payload) {
        is StreamResponsePayload.Task -> JSONObject().put("task", short(p.task.status.state))
        is StreamResponsePayload.StatusUpdate -> JSONObject().put("status", short(p.statusUpdate.status.state))
        is StreamResponsePayload.ArtifactUpdate -> JSONObject().put("artifact", texts(p.artifactUpdate.artifact.parts))
        is StreamResponsePayload.Message -> JSONObject().put("message", texts(p.message.parts))
        null -> JSONObject()
    }

    /** The task and context ids of an event or reply. */
    private fun ids(e: StreamResponse): Pair<String, String> = when (val p = e.payload) {
        is StreamResponsePayload.Task -> p.task.id to p.task.contextId
        is StreamResponsePayload.StatusUpdate -> p.statusUpdate.taskId to p.statusUpdate.contextId
        is StreamResponsePayload.ArtifactUpdate -> p.artifactUpdate.taskId to p.artifactUpdate.contextId
        else -> "" to ""
    }

    private fun request(turn: JSONObject, task: Pair<String, String>, returnImmediately: Boolean = false) = SendMessageRequest(
        message = userMessage(turn.getString("name"), task.first, task.second),
        configuration = if (returnImmediately) SendMessageConfiguration(returnImmediately = true) else null,
    )

    private fun reply(r: SendMessageResponse): JSONObject = when (val p = r.payload) {
        is SendMessageResponsePayload.Task -> JSONObject()
            .put("task", short(p.task.status.state))
            .put("artifacts", JSONArray(p.task.artifacts.map { texts(it.parts) }))
            .put("statusText", texts(p.task.status.message?.parts))
        is SendMessageResponsePayload.Message -> JSONObject().put("message", texts(p.message.parts))
        null -> JSONObject()
    }

    @Test
    fun `scenario vectors through our server and client`() = test {
        val failures = mutableListOf<String>()
        serving(Scripted()) { server ->
            val client = Client.connect(server.url()!!, null)
            for (case in cases) {
                // Each turn continues the task the one before it started (send, then stream).
                var task = "" to ""
                for (turn in turns(case)) {
                    val where = "${case.getString("name")} / ${turn.getString("name")}"
                    val cancels = case.has("cancelAfter")
                    var answer = client.sendMessage(request(turn, task, returnImmediately = cancels))
                    if (cancels) {
                        // Answered at once: a task that is still running.
                        val state = answer.task?.status?.state
                        if (state != TaskState.SUBMITTED && state != TaskState.WORKING) failures += "$where: the returnImmediately reply is $state, want a running task"
                        answer = SendMessageResponse(SendMessageResponsePayload.Task(client.cancelTask(answer.task!!.id)))
                    }
                    val answered = answer.task?.let { it.id to it.contextId } ?: ("" to "")
                    if (task.first.isNotEmpty() && answered != task) failures += "$where: send answered for task $answered, want $task"
                    task = answered
                    val got = reply(answer)
                    val want = turn.getJSONObject("send")
                    for (key in want.keySet()) {
                        if (!JSONArray().put(got.opt(key)).similar(JSONArray().put(want.get(key)))) {
                            failures += "$where: send $key = ${got.opt(key)}, want ${want.get(key)}"
                        }
                    }
                }
                task = "" to ""
                for (turn in turns(case)) {
                    val where = "${case.getString("name")} / ${turn.getString("name")}"
                    val raw = mutableListOf<StreamResponse>()
                    client.stream(request(turn, task)).collect { e ->
                        raw += e
                        if (case.has("cancelAfter") && raw.size == case.getInt("cancelAfter")) client.cancelTask(ids(raw[0]).first)
                    }
                    if (raw.isNotEmpty()) {
                        if (task.first.isNotEmpty() && ids(raw[0]) != task) failures += "$where: stream of task ${ids(raw[0])}, want $task"
                        task = ids(raw[0])
                    }
                    val events = JSONArray(raw.map { event(it) })
                    if (!events.similar(turn.getJSONArray("stream"))) failures += "$where: stream $events, want ${turn.getJSONArray("stream")}"
                }
            }
        }
        assertTrue(failures.isEmpty(), failures.joinToString("\n"))
    }
}
