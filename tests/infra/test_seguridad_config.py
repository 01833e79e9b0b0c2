"""The Kafka security settings without a broker: validation, one line per bad variable, and
what ``client_options`` gives aiokafka (the broker tests are tests/infra/test_seguridad_kafka.py).
"""

from __future__ import annotations

import ssl
import subprocess
from pathlib import Path

import pytest

from harness.pki import CertificateAuthority
from infra.config import ConfigError, Settings, effective, load_settings
from infra.kafka.clients import client_options

VARIABLES = Path(__file__).parents[2] / "deploy" / "variables.txt"


@pytest.fixture
def entorno(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No ``FICHAS_*`` variable of the test process leaks into the settings."""
    for name in VARIABLES.read_text().split():
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.fixture
def pki(tmp_path: Path) -> CertificateAuthority:
    """A CA with a client certificate ``fichas-worker``."""
    ca = CertificateAuthority(tmp_path / "pki")
    ca.issue("fichas-worker")
    return ca


def _lineas(entorno: pytest.MonkeyPatch, **variables: str) -> list[str]:
    """``load_settings``' lines for these variables (empty when they are accepted)."""
    for nombre, valor in variables.items():
        entorno.setenv(f"FICHAS_{nombre.upper()}", valor)
    try:
        load_settings()
    except ConfigError as exc:
        return exc.lines
    return []


def test_por_defecto_plaintext_y_las_opciones_solo_dicen_los_brokers(entorno) -> None:
    settings = load_settings()
    assert settings.kafka_seguridad == "PLAINTEXT"
    assert client_options(settings) == {
        "bootstrap_servers": "localhost:9092",
        "security_protocol": "PLAINTEXT",
    }


def test_sasl_ssl_con_scram(entorno, pki: CertificateAuthority, tmp_path: Path) -> None:
    """The password comes from its file (a trailing line break is not part of it), the TLS
    context trusts the CA file and checks the broker's name; the settings keep only paths."""
    clave = tmp_path / "clave"
    clave.write_text("s3cr3t:con espacios \n")
    assert not _lineas(
        entorno,
        kafka_seguridad="sasl_ssl",
        kafka_sasl_mecanismo="scram-sha-512",
        kafka_usuario="fichas-worker",
        kafka_contrasena_archivo=str(clave),
        kafka_ca_archivo=str(pki.cert),
    )
    settings = load_settings()
    opciones = client_options(settings)
    assert opciones["security_protocol"] == "SASL_SSL"
    assert opciones["sasl_mechanism"] == "SCRAM-SHA-512"
    assert opciones["sasl_plain_username"] == "fichas-worker"
    assert opciones["sasl_plain_password"] == "s3cr3t:con espacios "
    contexto = opciones["ssl_context"]
    assert isinstance(contexto, ssl.SSLContext)
    assert contexto.check_hostname and contexto.verify_mode == ssl.CERT_REQUIRED
    assert contexto.cert_store_stats()["x509_ca"] == 1  # the CA file, not the system's
    registro = str(effective(settings))
    assert "s3cr3t" not in registro and str(clave) in registro


def test_tls_mutuo(entorno, pki: CertificateAuthority) -> None:
    par = pki.issue("fichas-worker")
    assert not _lineas(
        entorno,
        kafka_seguridad="SSL",
        kafka_ca_archivo=str(pki.cert),
        kafka_certificado_archivo=str(par.cert),
        kafka_clave_privada_archivo=str(par.key),
    )
    opciones = client_options(load_settings())
    assert opciones["security_protocol"] == "SSL" and "sasl_mechanism" not in opciones
    assert isinstance(opciones["ssl_context"], ssl.SSLContext)


def test_una_linea_por_variable_mal_puesta(entorno, tmp_path: Path) -> None:
    lineas = _lineas(entorno, kafka_seguridad="SASL_SSL", kafka_ca_archivo=str(tmp_path))
    assert lineas == [
        "FICHAS_KAFKA_SASL_MECANISMO is not set: expected one of PLAIN, SCRAM-SHA-256, "
        "SCRAM-SHA-512 (FICHAS_KAFKA_SEGURIDAD=SASL_SSL needs it)",
        "FICHAS_KAFKA_USUARIO is not set: expected the SASL user name "
        "(FICHAS_KAFKA_SEGURIDAD=SASL_SSL needs it)",
        "FICHAS_KAFKA_CONTRASENA_ARCHIVO is not set: expected the path of the file holding the "
        "SASL password (FICHAS_KAFKA_SEGURIDAD=SASL_SSL needs it)",
        f"FICHAS_KAFKA_CA_ARCHIVO='{tmp_path}' is not valid: expected a readable file "
        "(Is a directory)",
    ]


@pytest.mark.parametrize(
    ("variables", "linea"),
    [
        (
            {"kafka_seguridad": "TLS"},
            "FICHAS_KAFKA_SEGURIDAD='TLS' is not valid: expected one of PLAINTEXT, SSL, "
            "SASL_PLAINTEXT, SASL_SSL",
        ),
        (
            {"kafka_sasl_mecanismo": "SCRAM-SHA-512"},
            "FICHAS_KAFKA_SASL_MECANISMO='SCRAM-SHA-512' is not valid: expected unset while "
            "FICHAS_KAFKA_SEGURIDAD=PLAINTEXT (it needs none)",
        ),
        (
            {"kafka_seguridad": "SSL", "kafka_usuario": "ana"},
            "FICHAS_KAFKA_USUARIO='ana' is not valid: expected unset while "
            "FICHAS_KAFKA_SEGURIDAD=SSL (it needs none)",
        ),
        (
            {"kafka_seguridad": "SASL_PLAINTEXT", "kafka_sasl_mecanismo": "GSSAPI",
             "kafka_usuario": "ana", "kafka_contrasena_archivo": "/dev/null"},
            "FICHAS_KAFKA_SASL_MECANISMO='GSSAPI' is not valid: expected one of PLAIN, "
            "SCRAM-SHA-256, SCRAM-SHA-512",
        ),
        (
            {"kafka_seguridad": "SASL_PLAINTEXT", "kafka_sasl_mecanismo": "PLAIN",
             "kafka_usuario": "ana", "kafka_contrasena_archivo": "/no/existe"},
            "FICHAS_KAFKA_CONTRASENA_ARCHIVO='/no/existe' is not valid: expected a readable "
            "file (No such file or directory)",
        ),
        (
            {"kafka_seguridad": "SASL_PLAINTEXT", "kafka_sasl_mecanismo": "PLAIN",
             "kafka_usuario": "ana", "kafka_contrasena_archivo": "/dev/null"},
            "FICHAS_KAFKA_CONTRASENA_ARCHIVO='/dev/null' is not valid: expected a file holding "
            "the password (this one is empty)",
        ),
        (
            {"kafka_seguridad": "SASL_PLAINTEXT", "kafka_sasl_mecanismo": "PLAIN",
             "kafka_usuario": "ana", "kafka_contrasena_archivo": "/dev/null",
             "kafka_ca_archivo": "/dev/null"},
            "FICHAS_KAFKA_CA_ARCHIVO='/dev/null' is not valid: expected unset while "
            "FICHAS_KAFKA_SEGURIDAD=SASL_PLAINTEXT (it needs none)",
        ),
    ],
)  # fmt: skip
def test_cada_error_su_linea(entorno, variables: dict[str, str], linea: str) -> None:
    assert linea in _lineas(entorno, **variables)


def test_certificado_y_clave_van_juntos_y_casan(
    entorno, pki: CertificateAuthority, tmp_path: Path
) -> None:
    par, otro = pki.issue("fichas-worker"), pki.issue("fichas-revisor")
    base = {"kafka_seguridad": "SSL"}
    assert _lineas(entorno, **base, kafka_certificado_archivo=str(par.cert)) == [
        "FICHAS_KAFKA_CLAVE_PRIVADA_ARCHIVO is not set: expected the private key of "
        "FICHAS_KAFKA_CERTIFICADO_ARCHIVO (a file)"
    ]
    entorno.delenv("FICHAS_KAFKA_CERTIFICADO_ARCHIVO")
    assert _lineas(entorno, **base, kafka_clave_privada_archivo=str(par.key)) == [
        f"FICHAS_KAFKA_CLAVE_PRIVADA_ARCHIVO='{par.key}' is not valid: expected unset while "
        "FICHAS_KAFKA_CERTIFICADO_ARCHIVO is (both or neither)"
    ]
    assert _lineas(entorno, **base, kafka_certificado_archivo=str(par.cert)) == []
    lineas = _lineas(entorno, kafka_clave_privada_archivo=str(otro.key))
    assert lineas == [
        f"FICHAS_KAFKA_CLAVE_PRIVADA_ARCHIVO='{otro.key}' is not valid: expected the "
        "unencrypted PEM private key of FICHAS_KAFKA_CERTIFICADO_ARCHIVO (key values mismatch)"
    ]
    assert _lineas(entorno, kafka_certificado_archivo=str(par.key)) == [
        f"FICHAS_KAFKA_CERTIFICADO_ARCHIVO='{par.key}' is not valid: expected a PEM certificate "
        "(no BEGIN CERTIFICATE block in the file)"
    ]


def test_una_clave_cifrada_se_rechaza_sin_preguntar(
    entorno, pki: CertificateAuthority, tmp_path: Path
) -> None:
    """OpenSSL would ask for the passphrase on the terminal; the settings refuse the key."""
    par = pki.issue("fichas-worker")
    cifrada = tmp_path / "cifrada.key"
    subprocess.run(
        ["openssl", "pkey", "-in", str(par.key), "-aes256", "-passout", "pass:x", "-out", cifrada],
        check=True,
        capture_output=True,
    )
    lineas = _lineas(
        entorno,
        kafka_seguridad="SSL",
        kafka_certificado_archivo=str(par.cert),
        kafka_clave_privada_archivo=str(cifrada),
    )
    assert lineas == [
        f"FICHAS_KAFKA_CLAVE_PRIVADA_ARCHIVO='{cifrada}' is not valid: expected the private "
        "key is encrypted; give an unencrypted PEM key"
    ]


def test_settings_directos_validan_igual() -> None:
    """``Settings(...)`` in code (the tests' ``settings_for``) gets the same checks."""
    with pytest.raises(ValueError, match="FICHAS_KAFKA_SEGURIDAD=SASL_SSL needs it"):
        Settings(kafka_seguridad="SASL_SSL")
