// tests/vectors/scenario through the Kotlin binding: a scripted Kotlin executor hosted by our
// server, driven by our Kotlin client (send and stream); the reply and the event sequence must be
// the ones the vector gives, as in core and every binding.
package a2anative

import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.toList
import org.json.JSONArray
import org.json.JSONObject
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.io.File

class ScenarioTest {
    private val cases: List<JSONObject> = JSONObject(File(VECTORS, "scenario/basic.json").readText())
        .getJSONArray("cases").let { a -> (0 until a.length()).map { a.getJSONObject(it) } }

    /** Plays the steps of the case the message names (its text is the case's name). */
    inner class Scripted : AgentExecutor {
        override suspend fun execute(context: RequestContext, events: EventSink) {
            val steps = cases.first { it.getString("name") == context.text }.getJSONArray("steps")
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
                    step.has("message") -> events.messageText(step.getString("message"))
                    step.has("sleepMs") -> delay(step.getLong("sleepMs"))
                    step.has("raise") -> throw IllegalStateException(step.getString("raise"))
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
                val name = case.getString("name")
                val got = reply(client.sendText(name))
                val want = case.getJSONObject("send")
                for (key in want.keySet()) {
                    if (!JSONArray().put(got.opt(key)).similar(JSONArray().put(want.get(key)))) {
                        failures += "$name: send $key = ${got.opt(key)}, want ${want.get(key)}"
                    }
                }
                val events = JSONArray(client.streamText(name).toList().map { event(it) })
                if (!events.similar(case.getJSONArray("stream"))) failures += "$name: stream $events, want ${case.getJSONArray("stream")}"
            }
        }
        assertTrue(failures.isEmpty(), failures.joinToString("\n"))
    }
}
