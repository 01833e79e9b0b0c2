"""How a client proves who it is: Kafka's protocols, SASL mechanisms and credential files.

The settings (``infra.config``) validate ``FICHAS_KAFKA_SEGURIDAD`` and its companions with the
checks here, so a bad file or a missing user stops the start-up with one line per variable;
``infra.kafka.clients.client_options`` reads the same files when it builds a client. Invariants:

* the password is only ever read from ``FICHAS_KAFKA_CONTRASENA_ARCHIVO``, never kept in the
  settings (they are logged), and no message here quotes it;
* every secret that comes as a file (the Kafka password; the PostgreSQL DSN and the LLM API key
  of ``FICHAS_*_ARCHIVO``, ``infra.config``) is read by ``read_secret``: a trailing line break
  is not part of it (``echo`` adds one), an empty file is refused;
* private keys are unencrypted PEM (Strimzi's ``user.key``): an encrypted key is refused here,
  where OpenSSL would otherwise ask for a passphrase on the terminal.

Which components need which ACLs, and where Kubernetes mounts the files: docs/despliegue.md.
"""

from __future__ import annotations

import ssl
from pathlib import Path

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_PROTOCOLS = ("SASL_PLAINTEXT", "SASL_SSL")
TLS_PROTOCOLS = ("SSL", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


class NoPassphrase(ValueError):
    """The private key is encrypted: no passphrase is configured, and none is asked for."""


def refuse_passphrase() -> str:
    """``load_cert_chain``'s password callback: an encrypted key is an error, never a prompt."""
    raise NoPassphrase("the private key is encrypted; give an unencrypted PEM key")


def read_text(path: Path) -> str:
    """The file's text; ``ValueError`` saying why it cannot be read (missing, a folder...)."""
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"a readable file ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise ValueError("a text file (PEM or a secret), not binary") from exc


def read_secret(path: Path, what: str = "the password") -> str:
    """The secret in ``path`` (``what`` it is, for the message), without its trailing line
    break; refuses an empty one. The one reader of every secret that comes as a file."""
    text = read_text(path)
    secret = text[:-1] if text.endswith("\n") else text
    secret = secret[:-1] if secret.endswith("\r") else secret
    if not secret:
        raise ValueError(f"a file holding {what} (this one is empty)")
    return secret


def check_ca(path: Path) -> None:
    """``path`` holds at least one PEM certificate OpenSSL accepts as a trust anchor."""
    text = read_text(path)
    if "-----BEGIN CERTIFICATE-----" not in text:
        raise ValueError("a PEM file of CA certificates (no BEGIN CERTIFICATE block in the file)")
    try:
        ssl.create_default_context(cadata=text)
    except (ssl.SSLError, ValueError) as exc:
        raise ValueError(f"a PEM file of CA certificates ({_reason(exc)})") from exc


def check_certificate(path: Path) -> None:
    """``path`` holds a PEM certificate (matched with its key by ``check_key_pair``)."""
    text = read_text(path)
    if "-----BEGIN CERTIFICATE-----" not in text:
        raise ValueError("a PEM certificate (no BEGIN CERTIFICATE block in the file)")


def check_key_pair(certificate: Path, key: Path) -> None:
    """The key loads without a passphrase and belongs to the certificate."""
    read_text(key)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    try:
        context.load_cert_chain(certificate, key, password=refuse_passphrase)
    except NoPassphrase as exc:
        raise ValueError(str(exc)) from exc
    except ssl.SSLError as exc:
        raise ValueError(
            f"the unencrypted PEM private key of FICHAS_KAFKA_CERTIFICADO_ARCHIVO ({_reason(exc)})"
        ) from exc


def _reason(exc: BaseException) -> str:
    """OpenSSL's reason in words (``KEY_VALUES_MISMATCH`` -> ``key values mismatch``)."""
    reason = getattr(exc, "reason", None)
    if isinstance(reason, str) and reason:
        return reason.lower().replace("_", " ")
    return str(exc)
