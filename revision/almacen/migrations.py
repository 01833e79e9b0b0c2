"""The review app's tables, on SQLite and PostgreSQL alike, as numbered migrations.

One schema for the app's one database: the review queue's tables (``revision_items``,
``revision_decisiones``, ``revision_skus``, the gates' ``revision_evidencias`` and
``revision_reinicios``; ``revision.almacen.cola``) and the reviewers' (``revision_usuarios``,
``revision_sesiones``, ``revision_secretos``; ``revision.almacen.cuentas``), and the certifier's
(``revision_secuencias``, ``revision_escrituras``, ``revision_leases``;
``revision.certificador.secuencias``, ``revision.certificador.escritura``,
``revision.certificador.lease``); migration 5 marks a candidate loop's items, migration 6 keeps
every ``--recalificar`` run (``revision.almacen.recalificaciones``); migration 7 numbers
the sample's items and keeps the coverage sequences (``revision.certificador.publicacion``,
``revision.certificador.coberturas``). The migrations are one sequence because the position in
the list is the version (``migraciones.numeradas``): a store's tables cannot have a numbering of
their own in the same migrations table. Every migration is written once and used for both
dialects, because none needs a dialect's own syntax; one that did would give ``Migracion`` its two
texts side by side. ``revision.almacen.database`` applies them.
"""

from __future__ import annotations

from migraciones import Esquema, Migracion

# The schema of the release before migrations, as it created it on both dialects.
_ESQUEMA_0 = (
    """create table if not exists revision_items (
        event_id text primary key,
        tipo text not null,
        motivo text not null,
        sku text not null,
        version bigint not null,
        familia text not null,
        criterios text not null,
        datos text not null,
        recibido_en double precision not null,
        estado text not null,
        cerrado_en double precision
    )""",
    "create index if not exists revision_items_abiertos on revision_items (estado, recibido_en)",
    "create index if not exists revision_items_sku on revision_items (sku, estado)",
    """create table if not exists revision_decisiones (
        event_id text primary key,
        tipo text not null,
        decision text not null,
        familia text not null,
        criterios text not null,
        revisor text not null,
        decidida_en double precision not null,
        segundos double precision not null,
        registro text not null,
        publicacion text,
        enviada integer not null default 0
    )""",
    "create index if not exists revision_decisiones_pendientes on revision_decisiones (enviada)",
    "create table if not exists revision_skus (sku text primary key, version bigint not null)",
    "create table if not exists revision_usuarios (nombre text primary key, hash text not null)",
    """create table if not exists revision_sesiones (
        token text primary key, usuario text not null, csrf text not null,
        expira double precision not null
    )""",
)

# Recall of the gate (``retenidas``) reads the held-back items by reason, oldest first.
_ESQUEMA_1 = (
    "create index if not exists revision_items_motivo on revision_items (motivo, recibido_en)",
)

# Sessions keep the SHA-256 of their token, never the token (a dump opens no session), and
# when they were last used (the idle timeout); the old table, whose rows hold tokens in plain
# text, is dropped: everyone logs in once more. A reviewer can be disabled (``activo``). The
# secrets table holds the key that signs the login form's CSRF token, shared by every replica.
_ESQUEMA_2 = (
    "drop table if exists revision_sesiones",
    """create table revision_sesiones (
        token_sha256 text primary key, usuario text not null, csrf text not null,
        creada double precision not null, usada double precision not null,
        expira double precision not null
    )""",
    "create index revision_sesiones_usuario on revision_sesiones (usuario)",
    "alter table revision_usuarios add column activo integer not null default 1",
    "create table revision_secretos (nombre text primary key, valor text not null)",
)

# The gates' evidence (issue 29, docs/puerta.md "Abrir la puerta"): one row per item whose
# record carries the loop's key (``clave``, contract v1.3), written in the item's own
# transaction and kept as long as the store (never dependent on a topic's retention).
# ``orden`` is the store-wide arrival order (the pooled sequence of a key is its rows in this
# order); ``llegada`` the position in the (key, family) sequence, what ``Evidencia.llegada``
# carries. Both are computed inside the insert's transaction and held unique, so a second
# writer racing on the same number fails and its batch is read again, never numbered twice.
# ``sombra`` is 1 when the gate of the item's family and key was closed when the app stored it
# (shadow mode: every final ficha reaches people, unselected). ``revision_reinicios`` holds, per
# gate, where its sequence starts again after the online bound closed it.
_ESQUEMA_3 = (
    """create table revision_evidencias (
        event_id text primary key,
        clave_id text not null,
        clave text not null,
        familia text not null,
        puntuacion double precision,
        codigo_ok integer not null,
        sombra integer not null,
        orden bigint not null,
        llegada bigint not null
    )""",
    "create unique index revision_evidencias_orden on revision_evidencias (orden)",
    "create unique index revision_evidencias_llegada "
    "on revision_evidencias (clave_id, familia, llegada)",
    """create table revision_reinicios (
        familia text not null,
        clave_id text not null,
        cerrada_en text not null,
        desde bigint not null,
        primary key (familia, clave_id, cerrada_en)
    )""",
)

# The certifier whose cost does not grow with history, and one certifier among replicas (issue
# 38, docs/revision.md "El certificador"). ``revision_secuencias``: one row per gate sequence
# (key id, family or ``*``), created with its first shadow-mode item (and here, for the
# evidence already stored), holding the sequence's ``puerta.secuencial.EstadoSecuencia`` as
# JSON (null until the certifier first advances it), its restart point ``desde`` and the last
# arrival order consumed ``posicion``; the two indexes read a sequence's rows after its
# position in arrival order. ``revision_escrituras``: every gate record the app decided to
# write, under a mark that names what it does and the record it replaces, so that two
# replicas, a restart or a click never write the same one twice. ``revision_leases``: who runs
# the rounds that write, until when. The decisions' index by kind and time is what the online
# bound's incremental read of the sample verdicts uses.
_ESQUEMA_4 = (
    "create index revision_evidencias_conjunta on revision_evidencias (clave_id, sombra, orden)",
    "create index revision_evidencias_familia "
    "on revision_evidencias (clave_id, familia, sombra, orden)",
    "create index revision_decisiones_tipo on revision_decisiones (tipo, decidida_en)",
    """create table revision_secuencias (
        clave_id text not null,
        familia text not null,
        clave text not null,
        desde bigint not null,
        posicion bigint not null,
        estado text,
        primary key (clave_id, familia)
    )""",
    "insert into revision_secuencias (clave_id, familia, clave, desde, posicion, estado) "
    "select clave_id, familia, min(clave), 0, -1, null from revision_evidencias "
    "where sombra = 1 group by clave_id, familia",
    "insert into revision_secuencias (clave_id, familia, clave, desde, posicion, estado) "
    "select clave_id, '*', min(clave), 0, -1, null from revision_evidencias "
    "where sombra = 1 group by clave_id",
    """create table revision_escrituras (
        marca text primary key,
        puerta text not null,
        estado text not null,
        creada double precision not null,
        enviada integer not null default 0
    )""",
    """create table revision_leases (
        name text primary key,
        holder text not null,
        expires_at double precision not null
    )""",
)

# A candidate loop's review items (issue 41, docs/revision.md "La vista candidata"): an item
# records whether it is a candidate's ficha (``candidata`` 1), which keeps it out of the main
# queue, out of the live figures and off the outbox. Its identity: a live or sample item's id
# (the ``event_id`` column of the review tables) is its record's ``event_id``; a candidate
# item's is ``<event_id>~candidata~<key id>`` (``revision.almacen.item.id_item``), because the
# candidate's record carries the live event's ``event_id`` and both items must be kept. Rows
# stored before this migration are live items (0). The index serves each queue view.
_ESQUEMA_5 = (
    "alter table revision_items add column candidata integer not null default 0",
    "create index revision_items_vista on revision_items (estado, candidata, recibido_en)",
)

# Every ``fichas calibrar --recalificar`` run (issue 47, docs/puerta.md "Re-scoring"): one row
# per run and label set it certified on (``etiquetas``: ``almacen:<generator id>`` for the
# store's labels of one generator, ``conjunto:<sha>`` for a labelled set), with the key it
# certified (its evaluator side is the variant tried), written whether the run published or
# not, so the next run and the Puertas page count the variants tried on the same labels.
_ESQUEMA_6 = (
    """create table revision_recalificaciones (
        corrida text not null,
        etiquetas text not null,
        clave_id text not null,
        clave text not null,
        hecha_en double precision not null,
        conservadas bigint not null,
        descartadas text not null,
        resultado text not null,
        publicar integer not null,
        delta double precision not null,
        primary key (corrida, etiquetas)
    )""",
    "create index revision_recalificaciones_etiquetas on revision_recalificaciones (etiquetas)",
)

# Issue 47 (docs/revision.md, "La puerta que se cierra sola", "Cobertura"). ``revision_muestras``:
# the store-wide arrival order of the sample's items (``fichas.muestra_revision``), numbered inside
# the item's transaction as ``revision_evidencias.orden`` is (held unique, so commits follow the
# numbers): the online bound and the detector read the verdicts in this order, the order of
# publication as the app saw it, not in the order people decided them. The sample items already
# stored are numbered by arrival time, the best order they have. ``revision_coberturas``: per key,
# family and pooled certification (its ``actualizada_en``), the family's own e-process at the
# pooled λ from the first arrival after the certifier first saw that certification, as a
# ``puerta.secuencial.EstadoSecuencia`` (null until first advanced), like ``revision_secuencias``.
_ESQUEMA_7 = (
    """create table revision_muestras (
        event_id text primary key,
        orden bigint not null
    )""",
    "create unique index revision_muestras_orden on revision_muestras (orden)",
    "insert into revision_muestras (event_id, orden) select event_id, "
    "row_number() over (order by recibido_en, event_id) - 1 from revision_items "
    "where tipo = 'muestra' and candidata = 0",
    """create table revision_coberturas (
        clave_id text not null,
        familia text not null,
        conjunta_en text not null,
        clave text not null,
        desde bigint not null,
        posicion bigint not null,
        estado text,
        primary key (clave_id, familia, conjunta_en)
    )""",
)

ESQUEMA = Esquema(
    nombre="revision",
    tabla="revision_migraciones",
    migraciones=(
        Migracion("the schema of the release before migrations", _ESQUEMA_0, _ESQUEMA_0),
        Migracion("items by reason, for the gate's held-back items", _ESQUEMA_1, _ESQUEMA_1),
        Migracion(
            "hashed session tokens, idle timeout, disabled reviewers, the login CSRF secret",
            _ESQUEMA_2,
            _ESQUEMA_2,
        ),
        Migracion(
            "the gates' evidence: key, score, code checks, shadow mode, arrival order; restarts",
            _ESQUEMA_3,
            _ESQUEMA_3,
        ),
        Migracion(
            "the certifier's stored sequence states, gate writes made once, and its lease",
            _ESQUEMA_4,
            _ESQUEMA_4,
        ),
        Migracion(
            "candidate items: their own queue view, kept beside the live item of their event",
            _ESQUEMA_5,
            _ESQUEMA_5,
        ),
        Migracion(
            "every --recalificar run: the label set, the key it certified, its result",
            _ESQUEMA_6,
            _ESQUEMA_6,
        ),
        Migracion(
            "the sample's arrival order, and each family's coverage sequences",
            _ESQUEMA_7,
            _ESQUEMA_7,
        ),
    ),
)
