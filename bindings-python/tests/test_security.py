"""Security through the Python package: API keys, JWTs with scopes (401 vs 403), scopes per
skill (``context.skills``), HTTPS and mutual TLS, a signed card, OAuth2 client credentials
chosen from the card, and signed push notifications checked by PushVerifier. Keys and
certificates: core/tests/fixtures (test-only)."""

from __future__ import annotations

import asyncio
import base64
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from a2a_native import AgentServer, Client, EventQueue, PushVerifier, RequestContext, errors, signing
from conftest import CARD, Echo, run

FIXTURES = Path(__file__).resolve().parents[2] / "core" / "tests" / "fixtures"
EC_KEY = (FIXTURES / "jwt-ec.pem").read_bytes()


def fixture(name: str) -> str:
    return str(FIXTURES / name)


def ec_jwk(kid: str) -> dict[str, Any]:
    public = load_pem_private_key(EC_KEY, password=None).public_key()
    key = json.loads(jwt.get_algorithm_by_name("ES256").to_jwk(public))
    key.update(kid=kid, alg="ES256")
    return key


class WhoAmI(Echo):
    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        await events.complete(context.principal["name"] if context.principal else "anonymous")


def answer(reply: Any) -> str:
    return str(reply["task"]["status"]["message"]["parts"][0]["text"])


@run
async def test_a_bearer_token_and_an_api_key_given_together_are_both_sent() -> None:
    async with AgentServer(CARD, WhoAmI(), bearer_tokens={"tok": "ada"}) as server:
        client = await Client.connect(server.url, bearer_token="tok", api_key=("X-API-Key", "k"))
        assert answer(await client.send("hi")) == "ada"
    security: Any = {"api_keys": {"k": "bob"}}
    async with AgentServer(CARD, WhoAmI(), security=security) as server:
        client = await Client.connect(server.url, bearer_token="tok", api_key=("X-API-Key", "k"))
        assert answer(await client.send("hi")) == "bob"


@run
async def test_api_keys_and_their_card_scheme() -> None:
    security: Any = {"api_keys": {"k-1": "service-one"}, "api_key_location": ("query", "key")}
    async with AgentServer(CARD, WhoAmI(), security=security) as server:
        anonymous = await Client.connect(server.url)
        assert anonymous.card["securitySchemes"]["apiKey"]["apiKeySecurityScheme"] == {"location": "query", "name": "key"}
        with pytest.raises(errors.UnauthenticatedError):
            await anonymous.send("hi")
        client = await Client.connect(server.url, card_api_key="k-1")  # sent where the card says
        assert answer(await client.send("hi")) == "service-one"
        with pytest.raises(errors.UnauthenticatedError):
            await (await Client.connect(server.url, card_api_key="wrong")).send("hi")


@run
async def test_jwt_scopes_give_401_or_403() -> None:
    security: Any = {
        "jwt": {"jwks": {"keys": [ec_jwk("k1")]}, "issuers": ["https://idp.test"], "audiences": ["a2a"]},
        "required_scopes": {"*": ["a2a.read"], "SendMessage": ["a2a.write"]},
    }

    def token(scope: str, **claims: Any) -> str:
        body = {"iss": "https://idp.test", "aud": "a2a", "sub": "ada", "scope": scope, "exp": int(time.time()) + 60}
        body.update(claims)
        return jwt.encode(body, EC_KEY, algorithm="ES256", headers={"kid": "k1"})

    async with AgentServer(CARD, WhoAmI(), security=security) as server:
        reader = await Client.connect(server.url, bearer_token=token("a2a.read"))
        with pytest.raises(errors.PermissionDeniedError):
            await reader.send("hi")
        assert (await reader.list_tasks()).get("tasks", []) == []
        writer = await Client.connect(server.url, card_bearer_token=token("a2a.read a2a.write"))
        assert answer(await writer.send("hi")) == "ada"
        expired = await Client.connect(server.url, bearer_token=token("a2a.read", exp=int(time.time()) - 600))
        with pytest.raises(errors.UnauthenticatedError):
            await expired.list_tasks()


class SkillsSeen(Echo):
    async def execute(self, context: RequestContext, events: EventQueue) -> None:
        await events.complete(",".join(context.skills))


@run
async def test_scopes_per_skill_reach_the_executor() -> None:
    def scoped(skill_id: str, scope: str) -> dict[str, Any]:
        requirement = [{"schemes": {"bearer": {"list": [scope]}}}]
        return {"id": skill_id, "name": skill_id, "description": "d", "tags": ["t"], "securityRequirements": requirement}

    card = {**CARD, "skills": [scoped("translate", "translate"), scoped("summarize", "summarize")]}
    security: Any = {"jwt": {"jwks": {"keys": [ec_jwk("k1")]}, "issuers": ["https://idp.test"], "audiences": ["a2a"]}}

    def token(scope: str) -> str:
        body = {"iss": "https://idp.test", "aud": "a2a", "sub": "ada", "scope": scope, "exp": int(time.time()) + 60}
        return jwt.encode(body, EC_KEY, algorithm="ES256", headers={"kid": "k1"})

    async with AgentServer(card, SkillsSeen(), security=security) as server:
        translator = await Client.connect(server.url, bearer_token=token("translate"))
        assert answer(await translator.send("hi")) == "translate"
        both = await Client.connect(server.url, bearer_token=token("summarize translate"))
        assert answer(await both.send("hi")) == "translate,summarize"
        with pytest.raises(errors.PermissionDeniedError):
            await (await Client.connect(server.url, bearer_token=token("other"))).send("hi")


@run
async def test_https_mutual_tls_and_a_signed_card() -> None:
    security: Any = {
        "tls": {"cert": fixture("tls-server.pem"), "key": fixture("tls-server.key"), "client_ca": fixture("tls-ca.pem")},
        "card_signing_key": (EC_KEY, "ES256", "card-1"),
    }
    async with AgentServer(CARD, WhoAmI(), security=security, host="127.0.0.1") as server:
        assert server.url.startswith("https://")
        client = await Client.connect(
            server.url,
            ca_cert_file=fixture("tls-ca.pem"),
            client_cert_files=(fixture("tls-client.pem"), fixture("tls-client.key")),
        )
        assert answer(await client.send("hi")).startswith("cert:3d357e08")
        # The same as PEM text, under core's names.
        with open(fixture("tls-ca.pem")) as ca, open(fixture("tls-client.pem")) as c, open(fixture("tls-client.key")) as k:
            pem_client = await Client.connect(server.url, ca_cert=ca.read(), client_identity=c.read() + k.read())
        assert answer(await pem_client.send("hi")).startswith("cert:3d357e08")
        assert signing.verify_card(client.card, {"keys": [ec_jwk("card-1")]}) == "card-1"
        # Without a client certificate, or without trusting the CA, nothing gets through.
        with pytest.raises(errors.A2AError):
            await (await Client.connect(server.url, ca_cert_file=fixture("tls-ca.pem"))).send("hi")
        with pytest.raises(errors.TransportError):  # the CA is not trusted: connect fails
            await (await Client.connect(server.url)).send("hi")


@pytest.fixture
def token_endpoint() -> Iterator[tuple[str, list[str]]]:
    """An OAuth2 token endpoint issuing `tok-N` to client `id`/`secret`."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = self.rfile.read(int(self.headers.get("content-length", 0))).decode()
            seen.append(body)
            ok = self.headers.get("authorization") == "Basic " + base64.b64encode(b"id:secret").decode()
            payload = {"access_token": f"tok-{len(seen)}", "token_type": "Bearer", "expires_in": 3600}
            data = json.dumps(payload if ok else {"error": "invalid_client"}).encode()
            self.send_response(200 if ok else 401)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/token", seen
    httpd.shutdown()


def test_oauth2_client_credentials_from_the_card(token_endpoint: tuple[str, list[str]]) -> None:
    url, seen = token_endpoint
    flows = {"clientCredentials": {"tokenUrl": url, "scopes": {"a2a": "use the agent"}}}
    card = {**CARD, "securitySchemes": {"oauth": {"oauth2SecurityScheme": {"flows": flows}}}}

    @run
    async def go() -> None:
        # The agent accepts the tokens the endpoint issues (as static tokens, for the test).
        async with AgentServer(card, WhoAmI(), bearer_tokens={"tok-1": "svc"}) as server:
            client = await Client.connect(server.url, client_credentials=("id", "secret"))
            assert answer(await client.send("hi")) == "svc"
            assert answer(await client.send("again")) == "svc"
            assert len(seen) == 1 and "grant_type=client_credentials" in seen[0]  # cached
            bad = await Client.connect(server.url, client_credentials=("id", "wrong"))
            with pytest.raises(errors.UnauthenticatedError, match="invalid_client"):
                await bad.send("hi")

    go()


def test_signed_push_notifications_verify_at_the_webhook() -> None:
    posts: list[tuple[list[tuple[str, str]], bytes]] = []

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            posts.append((list(self.headers.items()), body))
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    httpd = HTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    hook = f"http://127.0.0.1:{httpd.server_address[1]}/hook"
    security: Any = {"push_signing_key": (EC_KEY, "ES256", "push-1"), "allow_private_webhooks": True}
    card = {**CARD, "capabilities": {"pushNotifications": True}}

    @run
    async def go() -> None:
        async with AgentServer(card, Echo(), security=security) as server:
            client = await Client.connect(server.url)
            config: Any = {"taskPushNotificationConfig": {"url": hook, "token": "tok-9"}}
            task = (await client.send("hi", configuration=config))["task"]
            for _ in range(200):
                if len(posts) >= 2:
                    break
                await asyncio.sleep(0.02)
            assert len(posts) >= 2, posts
            import httpx

            async with httpx.AsyncClient() as http:
                jwks = (await http.get(f"{server.url}/.well-known/a2a-push-jwks.json")).json()
            verifier = PushVerifier(jwks, hook, issuer=server.url, token="tok-9")
            for headers, body in posts:
                assert verifier.verify(headers, body)["taskId"] == task["id"]
            headers, body = posts[0]
            with pytest.raises(errors.UnauthenticatedError, match="replayed"):
                verifier.verify(headers, body)
            with pytest.raises(errors.UnauthenticatedError, match="body"):
                PushVerifier(jwks, hook, issuer=server.url).verify(headers, body + b" ")
            with pytest.raises(errors.UnauthenticatedError, match="token"):
                PushVerifier(jwks, hook, token="other").verify(headers, body)
            # max_age is seconds, read by core as in every language: over a second old, the
            # delivery is fresh at 60 (it would be stale at 60 ms). Under a second is refused
            # (iat counts whole seconds), as is nonsense.
            await asyncio.sleep(1.1)
            assert PushVerifier(jwks, hook, max_age=60).verify(headers, body)["taskId"] == task["id"]
            for bad in (0, 0.5, -1, float("nan"), 1e19):
                with pytest.raises(errors.InvalidParamsError, match="maxAge"):
                    PushVerifier(jwks, hook, max_age=bad)

    go()
    httpd.shutdown()


def test_push_options_set_how_often_a_failing_webhook_is_tried() -> None:
    """``push=`` reaches core's sender: each notification is tried ``max_attempts`` times."""
    posts: list[str] = []

    class Down(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers.get("content-length", 0)))
            posts.append(self.path)
            self.send_response(503)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    httpd = HTTPServer(("127.0.0.1", 0), Down)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    hook = f"http://127.0.0.1:{httpd.server_address[1]}/hook"
    card = {**CARD, "capabilities": {"pushNotifications": True}}

    async def deliveries(attempts: int) -> int:
        posts.clear()
        push: Any = {"max_attempts": attempts, "initial_backoff": 0.02, "max_backoff": 0.02}
        async with AgentServer(card, Echo(), push=push, security={"allow_private_webhooks": True}) as server:
            client = await Client.connect(server.url)
            await client.send("hi", configuration={"taskPushNotificationConfig": {"url": hook}})
            # Settled once no attempt came for 0.8 s (retries wait 20 ms).
            seen, quiet, waited = -1, 0.0, 0.0
            while quiet < 0.8 and waited < 15:
                waited += 0.05
                await asyncio.sleep(0.05)
                quiet = quiet + 0.05 if len(posts) == seen and seen > 0 else 0.0
                seen = len(posts)
        return seen

    @run
    async def go() -> None:
        once = await deliveries(1)
        assert once > 0
        assert await deliveries(3) == 3 * once
        with pytest.raises(errors.InvalidParamsError, match="push.maxAttempts"):
            AgentServer(card, Echo(), push={"max_attempts": 0})
        with pytest.raises(errors.InvalidParamsError, match="push.retries"):
            bad: Any = {"retries": 3}
            AgentServer(card, Echo(), push=bad)

    go()
    httpd.shutdown()
