package a2anative

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.io.File

/** Security options through the Kotlin binding: API keys and principals, HTTPS with mutual TLS,
 *  signed cards, scopes per skill (`context.skills`). */
class SecurityTest {
    private val fixtures = File("../../core/tests/fixtures")

    private fun pem(name: String) = File(fixtures, name).readText()

    /** Completes with the caller's principal name. */
    private class WhoAmI : AgentExecutor {
        override suspend fun execute(context: RequestContext, events: EventSink) {
            events.statusText(TaskState.COMPLETED, context.principal ?: "anonymous")
        }

        override suspend fun cancel(context: RequestContext, events: EventSink) {}
    }

    private fun A2aTask.answer() = status.message!!.text

    @Test
    fun `API keys name the principal that owns the task`() = test {
        val security = """{"apiKeys": {"k-ada": "ada", "k-bob": "bob"}}"""
        serving(WhoAmI(), ServerOptions(security = security)) { server ->
            val anonymous = Client.connect(server.url()!!)
            assertEquals("UnauthenticatedError", assertThrows<A2aException> { anonymous.sendText("x") }.errorName)
            val ada = Client.connect(server.url()!!, ClientOptions(apiKey = ApiKey("X-API-Key", "k-ada")))
            val task = ada.sendText("x").task!!
            assertEquals("ada", task.answer())
            val bob = Client.connect(server.url()!!, ClientOptions(apiKey = ApiKey("X-API-Key", "k-bob")))
            assertEquals(-32001, assertThrows<A2aException> { bob.getTask(task.id) }.code)
        }
    }

    @Test
    fun `HTTPS with a client certificate`() = test {
        val tls = """{"tls": {"cert": "${File(fixtures, "tls-server.pem").absolutePath}",
            "key": "${File(fixtures, "tls-server.key").absolutePath}", "clientCa": "${File(fixtures, "tls-ca.pem").absolutePath}"}}"""
        serving(WhoAmI(), ServerOptions(security = tls)) { server ->
            val url = server.url()!!
            assertTrue(url.startsWith("https://"), url)
            val identity = pem("tls-client.pem") + pem("tls-client.key")
            val client = Client.connect(url, ClientOptions(caCert = pem("tls-ca.pem"), clientIdentity = identity))
            assertTrue(client.sendText("x").task!!.answer().startsWith("cert:"))
        }
    }

    @Test
    fun `cardApiKey goes where the card's scheme says, and PEM files stand for PEM text`() = test {
        val security = """{"apiKeys": {"k-ada": "ada"}}"""
        serving(WhoAmI(), ServerOptions(security = security)) { server ->
            // No header name given: the card's API key scheme names it.
            val ada = Client.connect(server.url()!!, ClientOptions(cardApiKey = "k-ada"))
            assertEquals("ada", ada.sendText("x").task!!.answer())
        }
        val tls = """{"tls": {"cert": "${File(fixtures, "tls-server.pem").absolutePath}",
            "key": "${File(fixtures, "tls-server.key").absolutePath}", "clientCa": "${File(fixtures, "tls-ca.pem").absolutePath}"}}"""
        serving(WhoAmI(), ServerOptions(security = tls)) { server ->
            val options = ClientOptions(
                caCertFile = File(fixtures, "tls-ca.pem").absolutePath,
                clientCertFiles = CertFiles(
                    certFile = File(fixtures, "tls-client.pem").absolutePath,
                    keyFile = File(fixtures, "tls-client.key").absolutePath,
                ),
            )
            assertTrue(Client.connect(server.url()!!, options).sendText("x").task!!.answer().startsWith("cert:"))
        }
        val missing = assertThrows<A2aException> { Client.connect("http://127.0.0.1:1", ClientOptions(caCertFile = "/no/such.pem")) }
        assertEquals("caCertFile", missing.fieldViolations.single().field)
        // A certificate file without its key cannot be written (CertFiles takes both); a key
        // file that is not there is refused, naming the option.
        val noKey = assertThrows<A2aException> {
            Client.connect("http://127.0.0.1:1", ClientOptions(clientCertFiles = CertFiles("c.pem", "/no/such.key")))
        }
        assertEquals(-32602, noKey.code)
        assertTrue(noKey.message!!.contains("clientCertFiles"), noKey.message)
    }

    @Test
    fun `cards signed here verify, tampered ones do not, and JCS is canonical`() = test {
        val card = agentCard("signed", "a card with a signature").copy(
            supportedInterfaces = listOf(AgentInterface(url = "https://agent.example/a2a", protocolBinding = "JSONRPC", protocolVersion = "1.0")),
        )
        val signed = signCard(card, pem("jwt-ec.pem"), "ES256", "card-1")
        assertEquals(1, signed.signatures.size)
        // The public key as a JWKS, from the signed push JWKS endpoint of a server using the same key.
        val security = """{"pushSigningKey": {"pem": ${org.json.JSONObject.quote(pem("jwt-ec.pem"))}, "alg": "ES256", "kid": "card-1"}}"""
        serving(Echo(), ServerOptions(security = security)) { server ->
            val jwks = java.net.URI("${server.url()}/.well-known/a2a-push-jwks.json").toURL().readText()
            assertEquals("card-1", verifyCard(signed, jwks, listOf("ES256")))
            val e = assertThrows<A2aException> { verifyCard(signed.copy(name = "impostor"), jwks, listOf("ES256")) }
            assertEquals("UnauthenticatedError", e.errorName)
            val verifier = PushVerifier(jwks, "https://hook.example/", null, null, null)
            assertThrows<A2aException> { verifier.verify(mapOf("a2a-notification-signature" to "not.a.jwt"), ByteArray(0)) }
        }
        assertEquals("""{"a":[1,"é"],"b":1e+21}""", canonicalize("""{"b": 1e21, "a": [1.0, "é"]}"""))
    }

    /** An ES256 JWT with `claims`, signed with the fixture key under kid `k1`. */
    private fun jwt(claims: String): String {
        val b64 = java.util.Base64.getUrlEncoder().withoutPadding()
        val input = b64.encodeToString("""{"alg":"ES256","kid":"k1","typ":"JWT"}""".toByteArray()) + "." + b64.encodeToString(claims.toByteArray())
        val der = java.util.Base64.getMimeDecoder().decode(pem("jwt-ec.pem").lines().filterNot { it.startsWith("-----") }.joinToString(""))
        val key = java.security.KeyFactory.getInstance("EC").generatePrivate(java.security.spec.PKCS8EncodedKeySpec(der))
        val signer = java.security.Signature.getInstance("SHA256withECDSAinP1363Format")
        signer.initSign(key)
        signer.update(input.toByteArray())
        return input + "." + b64.encodeToString(signer.sign())
    }

    /** Completes with the ids of the skills the caller may use. */
    private class SkillsSeen : AgentExecutor {
        override suspend fun execute(context: RequestContext, events: EventSink) {
            events.statusText(TaskState.COMPLETED, context.skills.joinToString(","))
        }

        override suspend fun cancel(context: RequestContext, events: EventSink) {}
    }

    @Test
    fun `scopes per skill reach the executor as context skills`() = test {
        // The fixture key's public half, as the push JWKS of a server signing with it.
        val signing = """{"pushSigningKey": {"pem": ${org.json.JSONObject.quote(pem("jwt-ec.pem"))}, "alg": "ES256", "kid": "k1"}}"""
        val jwks = serving(Echo(), ServerOptions(security = signing)) { server ->
            java.net.URI("${server.url()}/.well-known/a2a-push-jwks.json").toURL().readText()
        }
        fun scoped(id: String, scope: String) = AgentSkill(
            id = id, name = id, description = "d", tags = listOf("t"),
            securityRequirements = listOf(SecurityRequirement(schemes = mapOf("bearer" to StringList(list = listOf(scope))))),
        )
        val card = agentCard("scoped", "skills with scopes", skills = listOf(scoped("translate", "translate"), scoped("summarize", "summarize")))
        val server = AgentServer(card, SkillsSeen(), ServerOptions(security = """{"jwt": {"jwks": $jwks, "issuers": ["https://idp.test"], "audiences": ["a2a"]}}"""))
        server.start()
        try {
            val exp = System.currentTimeMillis() / 1000 + 60
            suspend fun caller(scope: String) = Client.connect(server.url()!!, ClientOptions(bearerToken = jwt("""{"iss": "https://idp.test", "aud": "a2a", "sub": "ada", "scope": "$scope", "exp": $exp}""")))
            assertEquals("translate", caller("translate").sendText("x").task!!.answer())
            assertEquals("translate,summarize", caller("summarize translate").sendText("x").task!!.answer())
            assertEquals("PermissionDeniedError", assertThrows<A2aException> { caller("other").sendText("x") }.errorName)
        } finally {
            server.stop()
            server.destroy()
        }
    }

    @Test
    fun `bad security options are refused at construction`() = test {
        val e = assertThrows<A2aException> { AgentServer(agentCard("a", "d"), WhoAmI(), ServerOptions(security = """{"apiKeyz": {}}""")) }
        assertEquals(-32602, e.code)
    }

    @Test
    fun `bearer tokens name their principals, and a second start is refused`() = test {
        serving(WhoAmI(), ServerOptions(bearerTokenPrincipals = mapOf("t-ada" to "ada"), bearerTokens = listOf("t-any"))) { server ->
            val ada = Client.connect(server.url()!!, ClientOptions(bearerToken = "t-ada"))
            assertEquals("ada", ada.sendText("x").task!!.answer())
            val any = Client.connect(server.url()!!, ClientOptions(bearerToken = "t-any"))
            assertEquals("bearer-token", any.sendText("x").task!!.answer())
            val e = assertThrows<A2aException> { server.start() }
            assertEquals(-32602, e.code)
            assertTrue(e.message!!.contains("already running"), e.message)
        }
    }

    @Test
    fun `limits are enforced`() = test {
        serving(WhoAmI(), ServerOptions(limits = ServerLimits(maxBodyBytes = 2000uL))) { server ->
            val client = Client.connect(server.url()!!)
            assertEquals("anonymous", client.sendText("x").task!!.answer())
            assertThrows<A2aException> { client.sendText("x".repeat(5000)) }
        }
    }
}
