"""Certificates for tests, made with openssl: a CA, a broker's certificate, clients' certificates.

Everything a secured test broker and its clients need, written as PEM files into one folder:
the CA (``ca.crt``), the broker's key and certificate in one file (``broker.pem``, the PEM
keystore Kafka reads, for 127.0.0.1 and localhost), and any number of client certificates
(``<name>.crt`` and ``<name>.key``, subject ``CN=<name>``: with mutual TLS the broker's principal
is ``User:CN=<name>``). Keys are unencrypted PKCS#8 on P-256 (fast to make; what Strimzi's
``user.key`` is too). A second ``CertificateAuthority`` in another folder is a CA the broker
does not trust. Certificates are valid for two days: they are made for one test run.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

DAYS = "2"


@dataclass(frozen=True)
class KeyPair:
    """A certificate and its private key, as PEM files."""

    cert: Path
    key: Path


class CertificateAuthority:
    """A throwaway CA in ``folder``; ``issue`` signs certificates with it."""

    def __init__(self, folder: Path, name: str = "fichas-test-ca") -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.cert = folder / "ca.crt"
        self.key = folder / "ca.key"
        if not self.cert.exists():
            _openssl(
                "req", "-x509", *_new_key(self.key), "-out", str(self.cert), "-days", DAYS,
                "-subj", f"/CN={name}",
                "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            )  # fmt: skip

    def issue(self, name: str, *, server: bool = False) -> KeyPair:
        """A certificate ``CN=<name>`` signed by this CA; a server's names 127.0.0.1 and
        localhost (the client checks the broker's name against them)."""
        pair = KeyPair(self.folder / f"{name}.crt", self.folder / f"{name}.key")
        if pair.cert.exists():
            return pair
        usage = "serverAuth,clientAuth" if server else "clientAuth"
        extensions = ["-addext", f"extendedKeyUsage={usage}"]
        if server:
            extensions += ["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"]
        _openssl(
            "req", "-x509", *_new_key(pair.key), "-out", str(pair.cert), "-days", DAYS,
            "-subj", f"/CN={name}", "-CA", str(self.cert), "-CAkey", str(self.key),
            "-addext", "basicConstraints=critical,CA:FALSE", *extensions,
        )  # fmt: skip
        return pair

    def broker_keystore(self) -> Path:
        """``broker.pem``: the broker's private key, then its certificate (Kafka's PEM keystore)."""
        pem = self.folder / "broker.pem"
        if not pem.exists():
            pair = self.issue("broker", server=True)
            pem.write_text(pair.key.read_text() + pair.cert.read_text())
        return pem


def _new_key(path: Path) -> list[str]:
    """openssl req's options for a new unencrypted P-256 key written to ``path``."""
    return [
        "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-noenc", "-keyout", str(path),
    ]  # fmt: skip


def _openssl(*args: str) -> None:
    """Run openssl; its own error text if it fails."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise RuntimeError("openssl not found (apt-get install -y openssl; scripts/test.sh does)")
    proc = subprocess.run([openssl, *args], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args[:2])} failed: {proc.stderr.strip()}")
