"""The ACLs of the Strimzi ``KafkaUser`` manifests, as ``kafka-acls`` commands for a test broker.

``k8s/base/kafka-usuarios/kafkausers.yaml`` is the one list of what each component may do
(docs/despliegue.md shows it as a table, a test keeps the two equal). The secured-broker tests
give each component exactly those ACLs, with the names a test's settings use instead of the
contract's defaults: a topic ``proveedor.cambios`` becomes the test's input topic, the group
``fichas`` its group, ``fichas-revisor`` the app's group and the transactional-id prefix
``fichas.`` its group's prefix. A resource the mapping does not know fails the test: the
manifests may only name what the code uses.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

from infra.config import Settings

REPO = Path(__file__).resolve().parent.parent
KAFKA_USERS = REPO / "k8s" / "base" / "kafka-usuarios" / "kafkausers.yaml"

_FLAGS = {
    "topic": "--topic",
    "group": "--group",
    "transactionalId": "--transactional-id",
}


def kafka_users(path: Path = KAFKA_USERS) -> dict[str, list[dict[str, Any]]]:
    """Each ``KafkaUser``'s name and its ACL entries, as the manifest writes them."""
    documents = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]
    return {
        d["metadata"]["name"]: list(d["spec"]["authorization"]["acls"])
        for d in documents
        if d["kind"] == "KafkaUser"
    }


def names_for(settings: Settings) -> dict[tuple[str, str, str], str]:
    """(resource type, pattern type, the manifest's name) -> the name under ``settings``."""
    defaults = Settings.model_construct()
    names: dict[tuple[str, str, str], str] = {}
    for field in Settings.model_fields:
        if field.startswith("topic_"):
            names["topic", "literal", getattr(defaults, field)] = getattr(settings, field)
    grupo, grupo_por_defecto = settings.grupo, defaults.grupo
    names["group", "literal", grupo_por_defecto] = grupo
    names["group", "literal", f"{grupo_por_defecto}-revisor"] = f"{grupo}-revisor"
    names["transactionalId", "prefix", f"{grupo_por_defecto}."] = f"{grupo}."
    return names


def acl_commands(user: str, settings: Settings, principal: str | None = None) -> list[list[str]]:
    """``kafka-acls`` argument lists that add ``user``'s ACLs for ``settings``' names: one
    command per operation and pattern type, naming every resource that has it."""
    names = names_for(settings)
    grouped: dict[tuple[str, str], list[str]] = defaultdict(list)
    for acl in kafka_users()[user]:
        resource = acl["resource"]
        kind, pattern = resource["type"], resource.get("patternType", "literal")
        if kind == "cluster":
            target = ["--cluster"]
        else:
            key = (kind, pattern, resource["name"])
            if key not in names:
                raise ValueError(f"KafkaUser {user}: {key} names nothing the code uses")
            target = [_FLAGS[kind], names[key]]
        for operation in acl["operations"]:
            grouped[operation, pattern] += target
    commands = []
    for (operation, pattern), targets in sorted(grouped.items()):
        command = ["--add", "--allow-principal", principal or f"User:{user}"]
        command += ["--operation", operation]
        if pattern == "prefix":
            command += ["--resource-pattern-type", "prefixed"]
        commands.append(command + targets)
    return commands
