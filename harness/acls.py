"""The ACLs of the Strimzi ``KafkaUser`` manifests, as ``kafka-acls`` commands for a test broker,
and those commands sent as one CreateAcls request (``create_acls``).

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
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from aiokafka.client import AIOKafkaClient
from aiokafka.protocol.admin import CreateAclsRequest_v1
from aiokafka.protocol.api import Request

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


# Kafka's protocol codes (org.apache.kafka.common.acl / resource), for ``create_acls``.
_RESOURCE_TYPES = {"--topic": 2, "--group": 3, "--cluster": 4, "--transactional-id": 5}
_PATTERN_TYPES = {"literal": 3, "prefixed": 4}
_OPERATIONS = {
    "all": 2, "read": 3, "write": 4, "create": 5, "delete": 6, "alter": 7, "describe": 8,
    "clusteraction": 9, "describeconfigs": 10, "alterconfigs": 11, "idempotentwrite": 12,
}  # fmt: skip
_ALLOW = 3


def acl_bindings(command: list[str]) -> list[tuple[int, str, int, str, str, int, int]]:
    """The bindings a ``kafka-acls --add --allow-principal P --operation OP
    [--resource-pattern-type prefixed] (--topic N | --group N | --transactional-id N |
    --cluster)...`` command adds, as CreateAcls v1 rows: (resource type, name, pattern type,
    principal, host, operation, permission)."""
    args = iter(command)
    principal, operation, pattern = "", -1, _PATTERN_TYPES["literal"]
    resources: list[tuple[int, str]] = []
    for arg in args:
        if arg == "--add":
            continue
        if arg == "--allow-principal":
            principal = next(args)
        elif arg == "--operation":
            operation = _OPERATIONS[next(args).lower().replace("_", "")]
        elif arg == "--resource-pattern-type":
            pattern = _PATTERN_TYPES[next(args).lower()]
        elif arg == "--cluster":
            resources.append((_RESOURCE_TYPES[arg], "kafka-cluster"))
        elif arg in _RESOURCE_TYPES:
            resources.append((_RESOURCE_TYPES[arg], next(args)))
        else:
            raise ValueError(f"kafka-acls argument not understood here: {arg}")
    if not principal or operation < 0 or not resources:
        raise ValueError(f"incomplete kafka-acls command: {command}")
    return [(kind, name, pattern, principal, "*", operation, _ALLOW) for kind, name in resources]


class _CreateAcls(Request[CreateAclsRequest_v1]):
    """CreateAcls v1 with every binding in one request (aiokafka's own sends one)."""

    API_KEY = 30

    def __init__(self, rows: list[tuple[int, str, int, str, str, int, int]]) -> None:
        self.rows = rows

    def build(self, request_struct_class: type[CreateAclsRequest_v1]) -> CreateAclsRequest_v1:
        return request_struct_class(self.rows)


async def create_acls(bootstrap: str, commands: Iterable[list[str]]) -> None:
    """Add the bindings of these ``kafka-acls --add`` commands through ``bootstrap`` (a super
    user's listener) in one CreateAcls request; a refused binding fails with Kafka's error."""
    rows = [row for command in commands for row in acl_bindings(command)]
    client = AIOKafkaClient(bootstrap_servers=bootstrap)
    await client.bootstrap()
    try:
        node = client.get_random_node()
        response = await client.send(node, _CreateAcls(rows))
    finally:
        await client.close()
    refused = [
        (row, code, message)
        for row, (code, message) in zip(rows, response.creation_responses, strict=True)
        if code
    ]
    if refused:
        raise RuntimeError(f"Kafka refused ACL bindings: {refused}")
