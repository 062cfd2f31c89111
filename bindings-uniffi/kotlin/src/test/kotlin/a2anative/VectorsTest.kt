// The shared vectors (tests/vectors) through the Kotlin binding: the model cases through core
// validation and the generated records' conversions, the 0.3 conversions both ways, the task-state operation table played as
// scenarios against a Kotlin executor, the jsonrpc and rest folders over HTTP against a
// Kotlin-hosted server, the options folder as typed records, and the sse folder through core's codec.
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

    /** v03: 0.3 <-> 1.0 conversions both ways, and the inputs each direction must refuse. */
    @TestFactory
    fun `v03 conversion vectors`(): List<DynamicTest> = load("v03").flatMap { (file, doc) ->
        val cases = doc.getJSONArray("cases")
        (0 until cases.length()).map { i ->
            val case = cases.getJSONObject(i)
            val (type, direction) = case.getString("type") to case.getString("direction")
            dynamicTest("$file/$type/${case.getString("name")}") {
                // A JSON value of any kind (TaskState and Role are strings), compared as JSON.
                fun same(out: String, expected: Any) =
                    assertTrue(JSONArray("[$out]").similar(JSONArray().put(expected)), "$out != $expected")
                val error = case.optJSONObject("error")
                if (error != null) {
                    val e = assertThrows<A2aException> {
                        if (direction == "to_v03") v10ToV03(type, json(case.get("v10")))
                        else v03ToV10(type, json(case.get("v03")))
                    }
                    assertEquals(error.getInt("code"), e.code)
                    assertEquals(error.getString("field"), e.fieldViolations.firstOrNull()?.field ?: "")
                    return@dynamicTest
                }
                if (direction != "to_v03") same(v03ToV10(type, json(case.get("v03"))), case.get("v10"))
                if (direction != "to_v10") same(v10ToV03(type, json(case.get("v10"))), case.get("v03"))
            }
        }
    }

    /** sse: core's decoder fed from Kotlin whole, split in two at every byte and one byte at a
     * time (the outcomes never depend on the chunking); the encoder byte for byte. */
    @TestFactory
    fun `sse vectors`(): List<DynamicTest> = load("sse").flatMap { (file, doc) ->
        val decode = doc.optJSONArray("decode") ?: JSONArray()
        val encode = doc.optJSONArray("encode") ?: JSONArray()
        (0 until decode.length()).map { i ->
            val case = decode.getJSONObject(i)
            dynamicTest("$file/decode/${case.getString("name")}") {
                val data = if (case.has("input_base64")) java.util.Base64.getDecoder().decode(case.getString("input_base64"))
                else case.getString("input").toByteArray(Charsets.UTF_8)
                val limit = if (case.has("max_event_bytes")) case.getLong("max_event_bytes").toULong() else null
                val splits = listOf(listOf(data)) +
                    (0..data.size).map { at -> listOf(data.copyOfRange(0, at), data.copyOfRange(at, data.size)) } +
                    listOf(data.map { byteArrayOf(it) })
                for (chunks in splits) {
                    val out = JSONObject(sseDecodeVector(chunks, limit))
                    assertTrue(out.getJSONArray("outcomes").similar(case.getJSONArray("expected")),
                        "chunks ${chunks.map { it.size }}: ${out.getJSONArray("outcomes")}")
                    if (case.has("last_event_id")) assertEquals(case.getString("last_event_id"), out.getString("last_event_id"))
                }
            }
        } + (0 until encode.length()).map { i ->
            val case = encode.getJSONObject(i)
            dynamicTest("$file/encode/${case.getString("name")}") {
                assertEquals(case.getString("expected"), sseEncodeVector(case.toString()))
            }
        } + dynamicTest("$file/encode refuses a case without event or comment") {
            assertEquals(-32602, assertThrows<A2aException> { sseEncodeVector("""{"name":"neither"}""") }.code)
        }
    }

    /** Every JSON-RPC request and response case and every HTTP+JSON route case, accepted or
     * refused, read from Kotlin and checked by the core codec this library ships. */
    @TestFactory
    fun `wire vectors`(): List<DynamicTest> = listOf("jsonrpc", "rest").flatMap { folder ->
        load(folder).flatMap { (file, doc) ->
            val cases = doc.getJSONArray("cases")
            (0 until cases.length()).map { i ->
                val case = cases.getJSONObject(i)
                dynamicTest("$folder/$file/${case.getString("name")}") {
                    assertEquals(null, checkWireVector(folder, doc.optString("kind", ""), case.toString()))
                }
            }
        }
    } + dynamicTest("a wire case that does not hold says why") {
        val wrong = """{"name": "x", "body": {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}},
            "expected": {"method": "GetTask", "params": {"id": "u"}, "id": 1}}"""
        assertTrue(checkWireVector("jsonrpc", "request", wrong)!!.contains("expected \"GetTask\" {\"id\":\"u\"}"))
    }

    /** A vector's value as JSON text (`JSONObject.toString()`, or a quoted string). */
    private fun json(value: Any): String = JSONArray().put(value).toString().removeSurrounding("[", "]")

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

    /** One HTTP/1.1 request sent byte for byte; (status, lower-cased headers, body). */
    private fun raw(port: Int, method: String, path: String, body: String?): Triple<Int, Map<String, String>, String> {
        java.net.Socket("127.0.0.1", port).use { socket ->
            socket.soTimeout = 10_000
            val payload = (body ?: "").toByteArray()
            val head = "$method $path HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
                "Content-Length: ${payload.size}\r\nConnection: close\r\n\r\n"
            socket.getOutputStream().apply { write(head.toByteArray()); write(payload); flush() }
            // No half-close: the server would drop the connection unanswered.
            val text = socket.getInputStream().readBytes().toString(Charsets.UTF_8)
            val (top, rest) = text.split("\r\n\r\n", limit = 2).let { it[0] to it.getOrElse(1) { "" } }
            val lines = top.split("\r\n")
            val headers = lines.drop(1).associate { l -> l.substringBefore(':').lowercase() to l.substringAfter(':').trim() }
            var content = rest
            if (headers["transfer-encoding"] == "chunked") {
                val out = StringBuilder()
                var at = 0
                while (true) {
                    val eol = content.indexOf("\r\n", at)
                    val size = content.substring(at, eol).trim().toInt(16)
                    if (size == 0) break
                    out.append(content, eol + 2, eol + 2 + size)
                    at = eol + 2 + size + 2
                }
                content = out.toString()
            }
            return Triple(lines[0].split(" ")[1].toInt(), headers, content)
        }
    }

    private fun bodyOf(case: JSONObject): String? = when {
        case.has("body_text") -> case.get("body_text").toString()
        case.has("body") -> JSONObject.valueToString(case.get("body")) // JSON text, a string quoted
        else -> null
    }

    /** jsonrpc/: every refused request vector gets its code and id from a Kotlin-hosted server
     *  (a refused notification: no JSON-RPC answer). */
    @org.junit.jupiter.api.Test
    fun `jsonrpc vectors over HTTP`() = test {
        serving(Echo()) { server ->
            val failures = mutableListOf<String>()
            var checked = 0
            for ((file, doc) in load("jsonrpc")) {
                if (doc.getString("kind") != "request") continue
                val cases = doc.getJSONArray("cases")
                for (i in 0 until cases.length()) {
                    val case = cases.getJSONObject(i)
                    val expected = case.getJSONObject("expected")
                    val want = expected.optJSONObject("error") ?: continue
                    if (expected.optBoolean("is_v03_method")) continue // the 0.3 adapter answers those
                    checked++
                    val (status, _, body) = raw(server.port()!!.toInt(), "POST", "/", bodyOf(case))
                    if (want.optBoolean("notification")) {
                        if (status != 204 || body.isNotEmpty()) failures += "$file ${case.getString("name")}: notification answered $status"
                        continue
                    }
                    val reply = JSONObject(body)
                    val code = reply.optJSONObject("error")?.optInt("code")
                    if (code != want.getInt("code") || JSONArray().put(reply.opt("id")).toString() != JSONArray().put(want.opt("id")).toString()) {
                        failures += "$file ${case.getString("name")}: got $code / ${reply.opt("id")}, want ${want.get("code")} / ${want.opt("id")}"
                    }
                }
            }
            assertTrue(checked > 60, "$checked cases")
            assertEquals(emptyList<String>(), failures)
        }
    }

    /** rest/: every refused request vector gets its HTTP status, Allow header and ErrorInfo reason. */
    @org.junit.jupiter.api.Test
    fun `rest vectors over HTTP`() = test {
        val reasons = errorTable().associate { it.code to it.reason }
        serving(Echo()) { server ->
            val failures = mutableListOf<String>()
            var checked = 0
            for ((file, doc) in load("rest")) {
                val cases = doc.getJSONArray("cases")
                for (i in 0 until cases.length()) {
                    val case = cases.getJSONObject(i)
                    val want = case.getJSONObject("expected").optJSONObject("error") ?: continue
                    val path = case.getString("path")
                    // `/` is also the JSON-RPC endpoint (POST) here: other methods get 405, not 404.
                    if (path == "" || path == "/") continue
                    checked++
                    val query = case.optString("query", "")
                    val (status, headers, body) =
                        raw(server.port()!!.toInt(), case.getString("method"), path + (if (query.isNotEmpty()) "?$query" else ""), bodyOf(case))
                    val name = "$file ${case.getString("name")}"
                    if (status != want.getInt("http_status")) {
                        failures += "$name: HTTP $status, want ${want.getInt("http_status")}"
                        continue
                    }
                    if (want.has("allow") && headers["allow"] != want.getString("allow")) failures += "$name: Allow ${headers["allow"]}"
                    val details = JSONObject(body).getJSONObject("error").optJSONArray("details") ?: JSONArray()
                    val got = (0 until details.length()).map { details.getJSONObject(it) }
                        .filter { it.optString("@type").endsWith("ErrorInfo") }.map { it.optString("reason") }
                    if (got != listOf(reasons[want.getInt("code")])) failures += "$name: reasons $got, want ${reasons[want.getInt("code")]}"
                }
            }
            assertTrue(checked > 40, "$checked cases")
            assertEquals(emptyList<String>(), failures)
        }
    }

    /**
     * options/: the typed records carry each case that they can express (camelCase names, the
     * right types, non-negative numbers and durations); core accepts or refuses it as in every
     * language, naming the same field. The rest cannot be written in Kotlin at all: a misspelt
     * or snake_case name, a wrong type or a negative unsigned number does not compile, and
     * uniffi refuses a negative Duration before core sees it.
     */
    @TestFactory
    fun `options vectors`(): List<DynamicTest> = listOf("server", "client").flatMap { kind ->
        val cases = JSONObject(File(VECTORS, "options/$kind.json").readText()).getJSONArray("cases")
        val all = (0 until cases.length()).map { cases.getJSONObject(it) }
        val make: (JSONObject) -> (() -> Unit)? = if (kind == "server") ::serverOptions else ::clientOptions
        val expressible = all.mapNotNull { case -> make(case.getJSONObject("options"))?.let { case to it } }
        // Each file keeps most of its cases expressible, refusals included.
        assertTrue(expressible.size * 2 > all.size, "$kind: ${expressible.size} of ${all.size}")
        assertTrue(expressible.any { it.first.has("error") }, "$kind: no refusal is expressible")
        expressible.map { (case, build) ->
            dynamicTest("options/$kind/${case.getString("name")}") {
                val field = case.optString("error", "")
                if (field.isEmpty()) {
                    build()
                } else {
                    val e = assertThrows<A2aException> { build() }
                    assertEquals(-32602, e.code)
                    val detail = (e as A2aException.Failure).detail
                    assertTrue(detail.startsWith(field), "$detail does not name $field")
                }
            }
        }
    }

    private class Inexpressible : Exception()

    private fun JSONObject.entries(): List<Pair<String, Any>> = keys().asSequence().map { it to get(it) }.toList()

    private fun str(v: Any): String = v as? String ?: throw Inexpressible()
    private fun bool(v: Any): Boolean = v as? Boolean ?: throw Inexpressible()
    private fun count(v: Any): Long = (v as? Number)?.toLong()?.takeIf { it >= 0 && it.toDouble() == v.toDouble() } ?: throw Inexpressible()
    private fun seconds(v: Any): java.time.Duration =
        (v as? Number)?.toDouble()?.takeIf { it >= 0 }?.let { java.time.Duration.ofNanos((it * 1e9).toLong()) } ?: throw Inexpressible()
    private fun strings(v: Any): List<String> = (v as? JSONArray)?.let { a -> (0 until a.length()).map { str(a.get(it)) } } ?: throw Inexpressible()

    /** A two-string array, as the records of core's pairs (ApiKey, ClientCredentials) hold one. */
    private fun pair(v: Any): List<String> = strings(v).takeIf { it.size == 2 } ?: throw Inexpressible()

    /** A server built with the case's options as a ServerOptions record; `null` if it has no such record. */
    private fun serverOptions(json: JSONObject): (() -> Unit)? = try {
        var o = ServerOptions()
        for ((key, v) in json.entries()) {
            o = when (key) {
                "store" -> o.copy(store = str(v))
                "bearerTokens" -> when (v) {
                    is JSONObject -> o.copy(bearerTokenPrincipals = v.entries().associate { (t, who) -> t to str(who) })
                    is JSONArray -> if ((0 until v.length()).all { v.get(it) is JSONArray }) {
                        o.copy(bearerTokenPrincipals = (0 until v.length()).associate { strings(v.get(it)).let { p -> p[0] to p[1] } })
                    } else {
                        o.copy(bearerTokens = strings(v))
                    }
                    else -> throw Inexpressible()
                }
                "limits" -> o.copy(limits = (v as? JSONObject ?: throw Inexpressible()).entries().fold(ServerLimits()) { l, (name, n) ->
                    when (name) {
                        "maxBodyBytes" -> l.copy(maxBodyBytes = count(n).toULong())
                        "maxBodyBytesInFlight" -> l.copy(maxBodyBytesInFlight = count(n).toULong())
                        "maxPartsPerMessage" -> l.copy(maxPartsPerMessage = count(n).toULong())
                        "maxHistoryLength" -> l.copy(maxHistoryLength = count(n).toULong())
                        "maxStreamsPerTask" -> l.copy(maxStreamsPerTask = count(n).toULong())
                        "maxHeaderBytes" -> l.copy(maxHeaderBytes = count(n).toULong())
                        "blockingTimeout" -> l.copy(blockingTimeout = seconds(n))
                        "headerReadTimeout" -> l.copy(headerReadTimeout = seconds(n))
                        "bodyReadTimeout" -> l.copy(bodyReadTimeout = seconds(n))
                        "idleTimeout" -> l.copy(idleTimeout = seconds(n))
                        "executorTimeout" -> l.copy(executorTimeout = seconds(n))
                        "maxConnections" -> l.copy(maxConnections = count(n).toULong())
                        "shutdownGrace", "shutdown_grace" -> l.copy(shutdownGrace = seconds(n))
                        "maxStreamsPerConnection", "max_streams_per_connection" -> l.copy(maxStreamsPerConnection = count(n).toUInt())
                        "maxTaskBytes" -> l.copy(maxTaskBytes = count(n).toULong())
                        else -> throw Inexpressible()
                    }
                })
                "push" -> o.copy(push = (v as? JSONObject ?: throw Inexpressible()).entries().fold(PushOptions()) { p, (name, n) ->
                    when (name) {
                        "maxAttempts", "max_attempts" -> p.copy(maxAttempts = count(n).toUInt())
                        "timeout" -> p.copy(timeout = seconds(n))
                        "initialBackoff" -> p.copy(initialBackoff = seconds(n))
                        "maxBackoff" -> p.copy(maxBackoff = seconds(n))
                        else -> throw Inexpressible()
                    }
                })
                "maxTasks" -> o.copy(maxTasks = count(v).toULong())
                "taskRetention" -> o.copy(taskRetention = seconds(v))
                "maxStoreBytes" -> o.copy(maxStoreBytes = count(v).toULong())
                "metricsAddress" -> o.copy(metricsAddress = str(v))
                "publicUrl" -> o.copy(publicUrl = str(v))
                "strictV1Card" -> o.copy(strictV1Card = bool(v))
                "corsOrigins", "cors_origins" -> o.copy(corsOrigins = (v as? JSONArray ?: throw Inexpressible()).let { a ->
                    (0 until a.length()).map { a.get(it) as? String ?: throw Inexpressible() }
                })
                // Core reads the security JSON as it reads it from every language.
                "security" -> o.copy(security = (v as? JSONObject ?: throw Inexpressible()).toString())
                "extendedCard" -> (v as? JSONObject ?: throw Inexpressible()).let { card ->
                    o.copy(extendedCard = agentCard(card.getString("name"), card.getString("description")))
                }
                else -> throw Inexpressible()
            }
        }
        val options = o
        val build: () -> Unit = { AgentServer(agentCard("options vectors", "Checks server options."), Echo(), options).close() }
        build
    } catch (_: Inexpressible) {
        null
    }

    /** A client built with the case's options as a ClientOptions record; `null` if it has no such record. */
    private fun clientOptions(json: JSONObject): (() -> Unit)? = try {
        var o = ClientOptions()
        for ((key, v) in json.entries()) {
            o = when (key) {
                "bearerToken" -> o.copy(bearerToken = str(v))
                "headers" -> when (v) {
                    is JSONObject -> o.copy(headers = v.entries().associate { (h, value) -> h to str(value) })
                    is JSONArray -> o.copy(headers = (0 until v.length()).associate { strings(v.get(it)).let { p -> p[0] to p[1] } })
                    else -> throw Inexpressible()
                }
                "timeout" -> o.copy(timeout = seconds(v))
                "connectTimeout" -> o.copy(connectTimeout = seconds(v))
                "streamIdleTimeout" -> o.copy(streamIdleTimeout = seconds(v))
                "binding" -> o.copy(binding = str(v))
                "retries" -> o.copy(retries = count(v).toUInt())
                "streamReconnects" -> o.copy(streamReconnects = count(v).toUInt())
                "maxResponseBytes" -> o.copy(maxResponseBytes = count(v).toULong())
                "allowV03" -> o.copy(allowV03 = bool(v))
                "extensions" -> o.copy(extensions = strings(v))
                "apiKey" -> when (v) {
                    is JSONArray -> pair(v).let { o.copy(apiKey = ApiKey(it[0], it[1])) }
                    else -> throw Inexpressible()
                }
                "clientCredentials" -> pair(v).let { o.copy(clientCredentials = ClientCredentials(it[0], it[1])) }
                "cardBearerToken" -> o.copy(cardBearerToken = str(v))
                "cardApiKey" -> o.copy(cardApiKey = str(v))
                "caCert" -> o.copy(caCert = str(v))
                "caCertFile" -> o.copy(caCertFile = str(v))
                else -> throw Inexpressible()
            }
        }
        val options = o
        val card = agentCard("options vectors", "Checks client options.")
            .copy(supportedInterfaces = listOf(AgentInterface(url = "http://127.0.0.1:9/", protocolBinding = "JSONRPC", protocolVersion = "1.0")))
        val build: () -> Unit = { Client.fromCard(card, options).close() }
        build
    } catch (_: Inexpressible) {
        null
    }
}
