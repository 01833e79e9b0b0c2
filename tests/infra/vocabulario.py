"""The two vocabularies the naming rule is checked with (tests/infra/test_idioma.py), and the
loanwords that belong to neither.

Each list holds the words the project's public names use, one language each; a word in neither
list (``sku``, ``llm``, ``version``, ``error``: shared by both languages or by none) says nothing.
A new word goes to the list of its language when a name first uses it; a loanword is a term
of a protocol or a tool that Spanish technical writing keeps as it is (docs/arquitectura.md,
"The naming rule").
"""

from __future__ import annotations

# Spanish: the contract's domain words, and the Spanish the project writes its own parts in.
ESPANOL = frozenset(
    """
    abandonadas abandono abierta abiertas abierto abiertos abrir acceso acciones acepta
    acompanar acronimos actuales actualizar acuerdo acumulados afirmaciones agentes agotada
    ajenas ajustes al alcance almacen anotar anteriores apertura aperturas aplicable
    aplicacion aplicada aprobacion aprobaciones aprobada aprobadas aprobado aprobar apuesta
    apuestas archivo arrancar atributos automatica automatico avanzar aviso avisos ayuda
    azul baja bajo bloque bloqueada bloqueado bucle buenas buscar cabecera cabeceras
    caducadas caida calcular calibrar cambiar cambio campo campos candidata candidatas casa
    caso casos cerrada cerrado cerrados cerrar cerrojo certificacion certificada certificar
    cierre cifra cifras cita citable citas clasificar clave claves cliente cobertura
    codificacion codigo codigos cognada cognadas cola comparable comparacion comparada
    comparar compatibles comprobaciones comprobado comprobados comprobar comun con
    concurrencia confianza configuracion confirmar conjunta conjunto conocidas construir
    contar contenido contexto contradicciones copia correcta correctas correr corto cota
    crear criterio criterios cruzado cruzados cubierta cubierto cubrible cubrir cuenta
    cuentas curso curva dar datos de decidida decidir decisiones declarada deduplicar
    defecto del descartar desconocida desconocido describir descripcion desde desenlace
    destino detalle devolver dia dictamen dictaminar diferencias directorio distintas
    distinto distintos documento duracion edad editada editados efecto ejecucion elegir en
    entrada entrega enviada enviar envio errores es escribir escritor escritos escritura
    espanol espera esquema esquemas estadistico estadisticos estado estados estructurada
    etiqueta etiquetas evaluacion evaluado evaluador evaluar evento evidencia evidencias
    excluida excluido exclusion exigir exito fallo fallos faltan familia familias fechado
    ficha fichero fija fila filas formato forzar fragmento fragmentos frases fuente fuera
    funcion garantia generador generar gobierno grafia grafias grafico grafo gris grupo
    guardada guardadas guardado guardar hilo historial huella humana identidad idioma
    idiomas inactividad incluye incompatibilidades incorrecta inferior informar informe
    inicial instruccion intento intentos intervalo invalida invalido inyeccion inyectado
    joven juicio juzgar la lado lector lectura leer leidos lemas letras liberada liberar
    limite limpiar linea lineas listar listas llamada llaves llegada llegadas lote malas
    mapear mapeo marca marcadores marcar mas masa matriz mayusculas mensaje metricas
    migracion migraciones migrar minima minimo misma mismo modelo modelos modo modos morado
    motivo motivos muestra muestras muestreo muestreos nada naranja nivel nodos nombre
    nombres normalizar nota nueva nuevo numero numeros objetivo obligatorios observacion
    observar obsoleta obsoleto ofrecer olvidar opciones origen origenes otra oyentes pagina
    palabra palabras para parecido pares particion particiones partida paso pausa pendiente
    pendientes permanente persona plantilla plantillas plazos podar politica por precargar
    precio precios prefijo pregunta preguntas preparar previo primera principal probabilidad
    probabilidades procesador procesar proceso progreso promocion promociones propagar
    propia propio proporcion proveedor publicacion publicada publicadas publicar publicas
    puerta puertas puerto punto puntos puntuacion que razon razones recalificadas
    recalificado recalificar rechazada rechazado rechazar rechazo rechazos reclamar reclamo
    reconstruir recorrido recortar red redes referencia refrescar registrar registro
    registros regla reglas reiniciar reinicios reintentar reintento reintentos rejilla
    releer remuestras requeridos reservar resolucion resolver respaldada respaldo responder
    respuesta resuelta resultado resultados resumen resumida resumidas retencion retener
    retenida retenidas retraso revisar revision revisor rige rigen rojo rondas rubrica ruta
    rutas sale salida secreto secuencia secuencial secuencias seguimiento seguir seguridad
    seleccionar senal servida servido servir sesgo sesion sesiones siguiente sin sistema
    sobre sombra sondear sondeo subir subreglas sufijo sufijos supera superados superior
    superlativos suspender suspendida sustituida tablas tamanos tasa tasas techo termino
    terminos texto textos tipo titular titulo todas traducir transaccion transitorio tras
    truncamiento ultima umbral unidades usar uso usuario usuarios vacia valido valor valores
    ventana verbos verdadero verde veredicto veredictos versiones vigente vigia vigilancia
    vigilar vista viva vocabulario y
    """.split()
)

# English: the plumbing words (any Kafka or HTTP service would have them) and their verbs.
INGLES = frozenset(
    """
    abandon accept access add adelete admin age agents aget ainvoke alist allowed and
    approvals aput arm armed arrived assigned assignors attempt attempts attributes
    authorization back backoff below bootstrap buckets budget build busy bytes call calls
    candidate certificate certified changed channel chat check checkpointer choose claim
    classify clear client close closed collect collector colors columns commit committed
    compacted complete configs configure confirm connect connection consumer counts covered
    current data database day decided decisions decode delay delivery depth describe
    description dir direct done draft drop due duration effective emitter encode end ended
    ensure ephemeral errors evaluator event evidence exists explain extra factory failed
    failure fault fence fetch fields figure file filename finish first flight for forced
    forget fragment free freeze gate get good governed group handle handler headers health
    heap held history holder host idle if in indented input integrity interval invalid is
    keep key keys kinds known labels lane lanes latency lease ledger length levels limit
    line live load locked logout loop loss lost lower margin mark mask masked mechanisms
    message meta metadata metric metrics migrate missing model models modules name names new
    node nodes not number of offline offset offsets oldest on only open opened options other
    outcome outcomes output overrides own owned owner owns pair parallel part partial
    partition partitioned partitioning partitions parts passphrase password pattern paused
    penalty pending percentile permanent point points pool port post prefix price probe
    produce produced producer producers profile progress promotion propose protocols prune
    queue range ranges read reader readiness ready reasons recall received record records
    refusal refuse refused registry reject release reminder renew repeat repo requested
    require response restore result results retention retry retrying revoked rounds rows
    rule run runbook running same sample sampled samples saver say score script seconds
    secret secrets send serializer serve server services session set settings settle short
    size skip skipped spawn spelled spent start started startup state statement states
    status stdin step steps stop stopped stopwords store success summarize summary
    superseded supplier switch synchronous tail take text thread threads threshold ticket
    timeout title to top track transaction transactional tuning tuple types unavailable unit
    units unreachable until up upper usage value view wait watch watermark window within
    write writer writes written
    """.split()
)

# Loanwords: Kafka's, HTTP's, SQL's and Python's terms, written as they are in either language.
PRESTAMOS = frozenset(
    """
    broker brokers cache config csrf default delete env exit hash insert log login main
    payload render select token tokens topic topics update upsert worker workers
    """.split()
)
