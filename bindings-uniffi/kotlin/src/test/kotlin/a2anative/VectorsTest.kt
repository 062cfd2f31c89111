// The shared vectors (tests/vectors) through the Kotlin binding: the model cases through core
// validation and the generated records' conversions, and the task-state operation table
// played as scenarios against a Kotlin executor.
package a2anative

import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.first
import org.json.JSONArray
import org.json.JSONObject
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.DynamicTest
import org.junit.jupiter.api.DynamicTest.dynamicTest
import org.junit.jupiter.api.TestFactory
import org.junit.jupiter.api.assertThrows
import java.io.File

class VectorsTest {
    private fun load(folder: String): List<Pair<String, JSONObject>> {
        val files = File(VECTORS, folder).listFiles { f -> f.name.endsWith(".json") }!!.sortedBy { it.name }
        assertTrue(files.isNotEmpty(), "no vectors in $folder")
        return files.map { it.nameWithoutExtension to JSONObject(it.readText()) }
    }

    /** Valid input: the records' round trip gives the canonical form. Invalid: the spec code and field. */
    @TestFactory
    fun `model vectors`(): List<DynamicTest> = load("model").flatMap { (file, doc) ->
        val groups = doc.getJSONArray("groups")
        (0 until groups.length()).flatMap { g ->
            val group = groups.getJSONObject(g)
            val type = group.getString("type")
            val valid = group.optJSONArray("valid") ?: JSONArray()
            val invalid = group.optJSONArray("invalid") ?: JSONArray()
            (0 until valid.length()).map { i ->
                val case = valid.getJSONObject(i)
                dynamicTest("$file/$type/${case.getString("name")}") {
                    val input = case.get("input")
                    val expected = case.opt("canonical") ?: input
                    val out = recordRoundTrip(type, input.toString())
                    assertTrue(JSONObject(out).similar(expected), "$out != $expected")
                }
            } + (0 until invalid.length()).map { i ->
                val case = invalid.getJSONObject(i)
                dynamicTest("$file/$type/invalid: ${case.getString("name")}") {
                    val error = case.getJSONObject("error")
                    val e = assertThrows<A2aException> { validateJson(type, case.get("input").toString()) }
                    assertEquals(error.getInt("code"), e.code)
                    assertEquals(error.getString("field"), e.fieldViolations.firstOrNull()?.field)
                }
            }
        }
    }

    /** state/transitions.json `operations`: message, cancel or subscribe on a task in each state. */
    @TestFactory
    fun `state operation vectors`(): List<DynamicTest> {
        val table = JSONObject(File(VECTORS, "state/transitions.json").readText()).getJSONArray("operations")
        return (0 until table.length()).flatMap { r ->
            val row = table.getJSONObject(r)
            val state = row.getString("state")
            listOf("message", "cancel", "subscribe").map { op ->
                dynamicTest("$state/$op") { test { scenario(state, op, row.getString(op)) } }
            }
        }
    }

    private suspend fun scenario(stateName: String, operation: String, outcome: String) = serving(Parker()) { server ->
        val client = Client.connect(server.url()!!)
        val state = TaskState.valueOf(stateName.removePrefix("TASK_STATE_"))
        val immediately = SendMessageConfiguration(returnImmediately = true)
        val reply = client.sendMessage(SendMessageRequest(message = userMessage("park $stateName"), configuration = immediately))
        val taskId = reply.task!!.id
        var task = client.getTask(taskId)
        repeat(200) {
            if (task.status.state == state) return@repeat
            delay(10)
            task = client.getTask(taskId)
        }
        assertEquals(state, task.status.state)
        val act: suspend () -> Unit = {
            when (operation) {
                "message" -> client.sendMessage(
                    SendMessageRequest(message = userMessage("more", taskId, task.contextId), configuration = immediately),
                )
                "cancel" -> assertEquals(TaskState.CANCELED, client.cancelTask(taskId).status.state)
                else -> {
                    val first = client.subscribe(taskId).first()
                    assertEquals(taskId, (first.payload as StreamResponsePayload.Task).task.id)
                }
            }
        }
        if (outcome == "ok") {
            act()
        } else {
            val e = assertThrows<A2aException> { kotlinx.coroutines.runBlocking { act() } }
            assertEquals(outcome, e.errorName)
        }
    }

    @TestFactory
    fun `error table rows carry their codes`(): List<DynamicTest> = errorTable().map { row ->
        dynamicTest(row.name) {
            assertTrue(row.name.endsWith("Error"))
            assertTrue(row.code < 0)
        }
    }
}
