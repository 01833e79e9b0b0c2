"""Why Kafka refused this client, in one line that names the setting to fix.

A refused login (SASL), a broker certificate the client does not trust and a missing ACL are
configuration errors: retrying cannot cure them, so the commands stop at once with exit 2 and
this line (docs/operacion.md, "Exit codes"), instead of waiting for a broker that answers.
``refusal`` classifies an error aiokafka raised; ``login_refusal`` opens one connection with
the client's own options to learn what aiokafka's bootstrap hides (it reports any failed
connection as "Unable to bootstrap"). Invariants: a line never quotes the password; anything
that is not certainly a refusal (a closed connection, a timeout) stays a reachability problem,
so a restarting broker is waited for as before (``infra.kafka.clients.connect_admin``).
"""

from __future__ import annotations

import ssl
from typing import Any

from aiokafka.conn import create_conn
from aiokafka.errors import (
    ClusterAuthorizationFailedError,
    GroupAuthorizationFailedError,
    SaslAuthenticationFailed,
    TopicAuthorizationFailedError,
    TransactionalIdAuthorizationFailed,
    UnsupportedSaslMechanismError,
)

from infra import credentials as security
from infra.config import Settings

ACLS_DOC = "docs/despliegue.md, step 1, lists each component's ACLs"
# What each authorization error says was denied, in words.
_DENIED = {
    TopicAuthorizationFailedError: "access to topic",
    GroupAuthorizationFailedError: "access to consumer group",
    TransactionalIdAuthorizationFailed: "the transactional id",
    ClusterAuthorizationFailedError: "a cluster operation",
}
AUTHORIZATION_ERRORS = tuple(_DENIED)
_HOSTNAME_MISMATCH = 62  # X509_V_ERR_HOSTNAME_MISMATCH


class KafkaRefused(RuntimeError):
    """Kafka refused this client (login, certificate or ACL): a configuration error, exit 2."""


def principal(settings: Settings) -> str:
    """Who this client is to the broker, in the settings' words."""
    if settings.kafka_seguridad in security.SASL_PROTOCOLS:
        return f"user {settings.kafka_usuario} (FICHAS_KAFKA_USUARIO)"
    if settings.kafka_certificado_archivo is not None:
        certificate = settings.kafka_certificado_archivo
        return f"the certificate {certificate} (FICHAS_KAFKA_CERTIFICADO_ARCHIVO)"
    return f"the anonymous principal of FICHAS_KAFKA_SEGURIDAD={settings.kafka_seguridad}"


def refusal(exc: BaseException, settings: Settings) -> KafkaRefused | None:
    """The ``KafkaRefused`` an error means, or None when it is not a refusal."""
    if isinstance(exc, KafkaRefused):
        return exc
    brokers = settings.kafka_brokers
    for kind, what in _DENIED.items():
        if isinstance(exc, kind):
            detail = _detail(exc)
            return KafkaRefused(
                f"Kafka at {brokers} denied {principal(settings)} {what}"
                f"{' ' + detail if detail else ''}: an ACL is missing ({ACLS_DOC})"
            )
    return None


def _detail(exc: BaseException) -> str:
    """The resource aiokafka names after the error's own name ("[Error 30] ...: fichas")."""
    _, _, named = str(exc).partition(": ")
    return named.strip().strip("{}").replace("'", "")


async def login_refusal(settings: Settings, options: dict[str, Any]) -> KafkaRefused | None:
    """Open one connection as the client would and say whether the login or TLS was refused.

    Tries the bootstrap servers in order; the first that completes the handshake, or refuses
    it, decides. None when one accepted, or when none could be asked (unreachable: the
    caller's wait handles that).
    """
    connection = {k: v for k, v in options.items() if k != "bootstrap_servers"}
    for server in settings.kafka_brokers.split(","):
        host, _, port = server.strip().rpartition(":")
        try:
            conn = await create_conn(
                host, int(port), client_id="fichas-acceso", request_timeout_ms=10_000, **connection
            )
        except Exception as exc:  # classified below; anything else is reachability
            refused = _login_refused(exc, server.strip(), settings)
            if refused is not None:
                return refused
            continue
        conn.close()
        return None
    return None


def _login_refused(exc: BaseException, server: str, settings: Settings) -> KafkaRefused | None:
    """A refused SASL login, an unsupported mechanism or an untrusted certificate; else None."""
    if isinstance(exc, SaslAuthenticationFailed):
        return KafkaRefused(
            f"Kafka at {server} refused the SASL login of user {settings.kafka_usuario} "
            f"(FICHAS_KAFKA_USUARIO / FICHAS_KAFKA_CONTRASENA_ARCHIVO): {_broker_says(exc)}"
        )
    if isinstance(exc, UnsupportedSaslMechanismError):
        return KafkaRefused(
            f"Kafka at {server} does not offer FICHAS_KAFKA_SASL_MECANISMO="
            f"{settings.kafka_sasl_mecanismo}: {_broker_says(exc)}"
        )
    if isinstance(exc, ssl.SSLCertVerificationError):
        if exc.verify_code == _HOSTNAME_MISMATCH:
            return KafkaRefused(
                f"Kafka at {server} presented a certificate for another name "
                f"(FICHAS_KAFKA_BROKERS must name the brokers as their certificates do): "
                f"{exc.verify_message}"
            )
        trusted = settings.kafka_ca_archivo or "the system's CAs"
        return KafkaRefused(
            f"Kafka at {server} presented a certificate that {trusted} "
            f"(FICHAS_KAFKA_CA_ARCHIVO) does not trust: {exc.verify_message}"
        )
    return None


def _broker_says(exc: BaseException) -> str:
    """The broker's own message, without aiokafka's "[Error 58] Name:" prefix."""
    text = str(exc)
    return text.split(": ", 1)[1] if text.startswith("[Error") and ": " in text else text
