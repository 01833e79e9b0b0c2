"""``Almacen.cerrados``: the decided items ``fichas calibrar --recalificar`` re-scores, with their
decision and whether they arrived in shadow mode, in arrival order; open items never, obsolete
ones with theirs. SQLite and PostgreSQL."""

from __future__ import annotations

import uuid
from pathlib import Path

from harness.estados_puerta import clave_fake
from harness.revisor import ficha_en_revision
from revision.almacen import decisiones as dec
from revision.almacen.cola import Almacen, Cierre, ItemNuevo, Llegada


async def test_cerrados_con_su_decision_en_orden_de_llegada(dsn: str | None, tmp_path: Path):
    almacen = await Almacen.abrir(dsn, tmp_path)
    prefijo = f"C-{uuid.uuid4().hex[:8]}"
    try:
        registros = {n: ficha_en_revision(f"{prefijo}-{n}") for n in ("a", "b", "c", "d")}
        # a arrived in shadow mode, c while its gate was open, b and d without evidence
        sombra = {"a": True, "c": False}
        for llegada, (n, r) in enumerate(registros.items()):
            evidencia = Llegada(clave_fake(), 0.9, True, sombra[n]) if n in sombra else None
            nuevo = ItemNuevo.de_registro(r, "revision", r["motivo"], [])
            await almacen.guardar_item(nuevo, 100.0 - llegada, evidencia)  # arrival d, c, b, a
        for n, decision in (("a", "aprobada"), ("c", "rechazada")):
            item = await almacen.item(registros[n]["event_id"])
            assert item is not None
            registro = dec.decision_de(item, decision, "ana", 200.0)
            await almacen.decidir(item, Cierre(decision, [], "ana", 200.0, registro, None))
        await almacen.observar_version(registros["b"]["sku"], 99, 300.0)  # b: obsoleta
        cerrados = [
            (i.event_id, i.datos["ficha"] == registros[n]["ficha"], d, s)
            for i, d, s in await almacen.cerrados()
            for n in registros
            if i.event_id == registros[n]["event_id"]
        ]
        ids = {n: registros[n]["event_id"] for n in registros}
        assert cerrados == [
            (ids["c"], True, "rechazada", False),
            (ids["b"], True, "obsoleta", None),
            (ids["a"], True, "aprobada", True),
        ]  # d is still open
    finally:
        await almacen.cerrar()
