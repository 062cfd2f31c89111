"""Signed Agent Cards (A2A §8.4): a detached JWS over the card's RFC 8785 canonical form,
made and checked by the Rust core. Keys are PEM private keys for signing and a JWKS (dict)
for verifying; algorithms are ``"ES256"``, ``"RS256"`` or ``"EdDSA"``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from . import _native
from .models import AgentCard

__all__ = ["canonicalize", "sign_card", "verify_card"]


def canonicalize(value: Any) -> bytes:
    """The RFC 8785 (JCS) bytes of a JSON value (nesting deeper than 128 is refused)."""
    return _native.canonicalize(value)


def sign_card(card: AgentCard | Mapping[str, Any], key: bytes, *, alg: str, kid: str, jku: str | None = None) -> AgentCard:
    """``card`` with one more signature (earlier ones are kept and not covered)."""
    return cast(AgentCard, _native.sign_card(dict(card), key, alg, kid, jku))


def verify_card(
    card: AgentCard | Mapping[str, Any], jwks: Mapping[str, Any], algorithms: Sequence[str] = ("ES256", "RS256", "EdDSA")
) -> str:
    """The ``kid`` of a signature that verifies under ``jwks``; raises
    :class:`~a2a_native.errors.UnauthenticatedError` when none does."""
    return _native.verify_card(dict(card), dict(jwks), list(algorithms))
