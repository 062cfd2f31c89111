"""Signed Agent Cards across implementations: our canonical JSON against an independent
RFC 8785 implementation (rfc8785 on PyPI), cards we sign verified by the official a2a-sdk's
verifier, and cards it signs verified by ours. Keys: core/tests/fixtures (test-only)."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import jwt
import pytest
import rfc8785
from a2a.types import AgentCard as SdkCard
from a2a.utils.signing import InvalidSignaturesError, create_agent_card_signer, create_signature_verifier
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from google.protobuf.json_format import MessageToDict, ParseDict  # type: ignore[import-untyped]

from a2a_native import errors, signing

FIXTURES = Path(__file__).resolve().parents[2] / "core" / "tests" / "fixtures"
KEYS = {"ES256": "jwt-ec.pem", "RS256": "jwt-rsa.pem", "EdDSA": "jwt-ed25519.pem"}

CARD: dict[str, Any] = {
    "name": "signed agent",
    "description": "Ünïcödé, emoji 😀 and \u2028 separators",
    "version": "1.0.0",
    "supportedInterfaces": [
        {"url": "https://agent.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    ],
    "capabilities": {
        "streaming": True,
        "extensions": [{"uri": "urn:x", "params": {"n": 1.5e21, "small": 1e-7, "z": [0.1, 100, -3]}}],
    },
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "s", "name": "s", "description": "d", "tags": ["t"]}],
}


def pem(alg: str) -> bytes:
    return (FIXTURES / KEYS[alg]).read_bytes()


def jwk(alg: str, kid: str) -> dict[str, Any]:
    public = load_pem_private_key(pem(alg), password=None).public_key()
    algorithm = jwt.get_algorithm_by_name(alg)
    key = json.loads(algorithm.to_jwk(public))
    key.update(kid=kid, alg=alg)
    return key


def corpus() -> list[Any]:
    """Values that exercise RFC 8785: key order by UTF-16 units, string escapes, numbers."""
    numbers = [0, -0.0, 1, -1, 0.1, 1e21, 1e20, 1e-7, 1e-6, 5e-324, 1.7976931348623157e308, 2**53 - 1, -(2**53) + 1, 333333333.3333333, 1 / 3]
    rng = random.Random(8785)
    numbers += [rng.uniform(-1e6, 1e6) for _ in range(50)] + [rng.random() * 10 ** rng.randint(-30, 30) for _ in range(50)]
    strings = ["", "plain", "\u0000\u001f\u007f", '"\\/', "\u2028\u2029", "é€😀", "\ud7ff\ue000\ufb01", "\t\n\r\b\f"]
    keys = ["b", "a", "A", "😀", "\ufb01", "€", "aa", "", "\u0080"]
    values: list[Any] = [*numbers, *strings, True, False, None, [], {}]
    values.append({k: i for i, k in enumerate(keys)})
    values.append({"nested": [{"z": 1, "y": [None, {"x": 0.5}]}], "list": numbers[:10]})
    return values


@pytest.mark.parametrize("value", corpus(), ids=lambda v: repr(v)[:40])
def test_canonical_json_matches_an_independent_rfc8785(value: Any) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        pytest.skip("not JSON")
    assert signing.canonicalize(value) == rfc8785.dumps(value)


def test_nesting_and_non_json_are_refused() -> None:
    deep: Any = 1
    for _ in range(200):
        deep = [deep]
    with pytest.raises(errors.InvalidParamsError):
        signing.canonicalize(deep)
    with pytest.raises(ValueError):
        signing.canonicalize(float("nan"))
    # Beyond 2^53 - 1 an integer has no exact double: both implementations refuse it.
    with pytest.raises(errors.InvalidParamsError):
        signing.canonicalize({"n": 2**53})
    with pytest.raises(rfc8785.IntegerDomainError):
        rfc8785.dumps({"n": 2**53})


@pytest.mark.parametrize("alg", sorted(KEYS))
def test_cards_we_sign_verify_with_the_official_sdk(alg: str) -> None:
    signed = signing.sign_card(CARD, pem(alg), alg=alg, kid="k1", jku="https://agent.example/jwks.json")
    assert signing.verify_card(signed, {"keys": [jwk(alg, "k1")]}) == "k1"
    verify = create_signature_verifier(lambda kid, jku: jwt.PyJWK(jwk(alg, kid or "")), [alg])
    verify(ParseDict(signed, SdkCard()))  # raises when no signature verifies
    tampered = ParseDict({**signed, "description": "changed"}, SdkCard())
    with pytest.raises(InvalidSignaturesError):
        verify(tampered)


@pytest.mark.parametrize("alg", sorted(KEYS))
def test_cards_the_official_sdk_signs_verify_with_ours(alg: str) -> None:
    sign = create_agent_card_signer(
        signing_key=pem(alg), protected_header={"kid": "sdk", "alg": alg, "jku": None, "typ": "JOSE"}
    )
    signed = MessageToDict(sign(ParseDict(CARD, SdkCard())))
    assert signing.verify_card(signed, {"keys": [jwk(alg, "sdk")]}, [alg]) == "sdk"
    with pytest.raises(errors.UnauthenticatedError):
        signing.verify_card({**signed, "name": "impostor"}, {"keys": [jwk(alg, "sdk")]}, [alg])
    with pytest.raises(errors.UnauthenticatedError):
        signing.verify_card(signed, {"keys": [jwk(alg, "sdk")]}, ["RS384"])
