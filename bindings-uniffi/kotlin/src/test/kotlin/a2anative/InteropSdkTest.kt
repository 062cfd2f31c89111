// The official a2a-sdk Python client (bindings-python/.venv) against a Kotlin executor served
// by our server, on both bindings.
package a2anative

import org.json.JSONObject
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.ValueSource
import java.io.File

class InteropSdkTest {
    private val python = File(REPO, "bindings-python/.venv/bin/python")
    private val script = File(REPO, "bindings-uniffi/kotlin/src/test/resources/sdk_client.py")

    @ParameterizedTest
    @ValueSource(strings = ["JSONRPC", "HTTP+JSON"])
    fun `the official Python client talks to a Kotlin executor`(binding: String) = test {
        assumeTrue(python.canExecute(), "bindings-python/.venv with a2a-sdk is not set up")
        serving(Echo()) { server ->
            val (code, out) = runCommand(python.path, script.path, server.url()!!, binding, "hi from the sdk")
            assertEquals(0, code, out)
            val result = JSONObject(out.trim().lines().last())
            assertEquals("TASK_STATE_COMPLETED", result.getString("state"))
            assertEquals("echo: hi from the sdk", result.getString("artifact"))
            assertEquals("TASK_STATE_COMPLETED", result.getString("streamed_state"))
        }
    }
}
