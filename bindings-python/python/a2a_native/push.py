"""Receiving signed push notifications: check that a POST to your webhook comes from the agent,
is fresh, carries the body it signed and is not a replay, before acting on it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from . import _native

__all__ = ["PushVerifier"]


class PushVerifier:
    """Verifies notifications from one agent to one webhook.

    ``jwks``: the agent's push keys (``GET <agent>/.well-known/a2a-push-jwks.json``);
    ``audience``: your webhook URL as registered; ``issuer``: the agent's base URL; ``token``:
    the push config's token (checked in constant time); ``max_age``: seconds a notification
    stays acceptable (and its id is remembered against replays)."""

    def __init__(
        self,
        jwks: Mapping[str, Any],
        audience: str,
        *,
        issuer: str | None = None,
        token: str | None = None,
        max_age: float = 300.0,
    ) -> None:
        options = {"jwks": dict(jwks), "audience": audience, "issuer": issuer, "token": token, "maxAge": max_age}
        self._native = _native.PushVerifier(options)

    def verify(self, headers: Mapping[str, str] | Iterable[tuple[str, str]], body: bytes) -> dict[str, Any]:
        """``{"taskId", "jti", "issuedAt"}``, or :class:`~a2a_native.errors.UnauthenticatedError`
        naming the check that failed."""
        pairs = list(headers.items()) if isinstance(headers, Mapping) else list(headers)
        return self._native.verify(pairs, bytes(body))
