"""The issue-48 extension of the labelled set: more candidates for the same 80 events.

Written by hand like the rest (README.md, «Ampliación del issue 48»): for every event one more
good ficha, two for an origin in English, Portuguese or French (a translation, reworded), and
one or two bad ones, mostly a fact the origin does not give written the way a generator slips
it in: a sentence of its own, or a clause inside a translated sentence. Every verdict is the
author's, reading the candidate against the origin; none comes from a model.
"""

from __future__ import annotations

from modelo import Candidata, alt, atributo_falso, inventa, superlativo, vacia

TRADUCCION = "ampliación 48: traducción con otras palabras"
REDACCION = "ampliación 48: otra redacción"


def dentro(descripcion: str, frase: str, *, titulo: str | None = None) -> Candidata:
    """A good-looking description with one invented clause inside a sentence (C04)."""
    return alt(
        descripcion,
        aprobada=False,
        criterios=["C04"],
        nota=f"ampliación 48: inventa dentro de una frase: «{frase}»",
        titulo=titulo,
    )


def buena(descripcion: str, *, titulo: str | None = None, traduce: bool = False) -> Candidata:
    """Another wording a catalogue editor would publish."""
    return alt(descripcion, titulo=titulo, nota=TRADUCCION if traduce else REDACCION)


EXTRA: dict[str, list[Candidata]] = {
    # zapatillas
    "EV-ZAP-01": [
        buena(
            "Zapatilla de running ligera, con empeine de malla y suela de goma. Pesa 280 g.",
            traduce=True,
        ),
        buena(
            "Zapatilla para correr, ligera, de malla en la parte superior y con suela de goma; "
            "su peso es de 280 g.",
            titulo="Zapatilla Runner X2 negra de malla para hombre",
            traduce=True,
        ),
        dentro(
            "Zapatilla ligera para correr, con parte superior de malla reflectante y suela de "
            "goma. Pesa 280 g.",
            "reflectante",
        ),
        inventa("Incluye una plantilla extraíble que se puede lavar."),
    ],
    "EV-ZAP-02": [
        buena("Zapatilla de trail para mujer, de malla transpirable y con suela de goma."),
        inventa("Sus tacos agarran bien en barro y en roca mojada."),
        vacia("Zapatilla gris de trail para mujer, talla 38."),
    ],
    "EV-ZAP-03": [
        buena(
            "Zapatilla casual de piel sintética para el día a día, con plantilla acolchada y "
            "suela de goma.",
            traduce=True,
        ),
        buena(
            "Zapatilla informal de mujer en piel sintética blanca; lleva plantilla acolchada y "
            "suela de goma.",
            traduce=True,
        ),
        dentro(
            "Zapatilla casual de piel sintética con plantilla acolchada de espuma con memoria y "
            "suela de goma.",
            "de espuma con memoria",
        ),
    ],
    "EV-ZAP-04": [
        buena(
            "Zapatilla baja de lona de algodón con suela de caucho vulcanizado y cordones planos.",
            traduce=True,
        ),
        buena(
            "Zapatilla de lona de algodón, baja, con cordones planos y suela vulcanizada de "
            "caucho.",
            titulo="Zapatilla de lona azul marino para hombre",
            traduce=True,
        ),
        inventa("La lona está tratada para repeler el agua."),
    ],
    "EV-ZAP-05": [
        buena("Zapatilla urbana de piel para hombre, con suela de goma."),
        dentro(
            "Zapatilla urbana de piel con suela de goma antideslizante y forro transpirable.",
            "antideslizante y forro transpirable",
        ),
        inventa("Es vegana y está hecha con materiales reciclados."),
    ],
    "EV-ZAP-06": [
        buena(
            "Zapatilla para niño con cierre de velcro, fácil de poner y de quitar, con parte "
            "superior sintética y suela de goma que no deja marcas. Pesa 190 g.",
            traduce=True,
        ),
        buena(
            "Zapatilla infantil de velcro que se calza y se descalza con facilidad; la parte "
            "superior es sintética y la suela de goma no marca el suelo.",
            traduce=True,
        ),
        inventa("Las punteras reforzadas aguantan el roce del patio."),
    ],
    "EV-ZAP-07": [
        buena(
            "Zapatilla de running para mujer con upper de malla, mediasuela de EVA y drop de 8 mm."
        ),
        inventa("Está pensada para corredoras con pisada pronadora."),
        superlativo("Te encantará desde el primer kilómetro."),
    ],
    "EV-ZAP-08": [
        buena(
            "Zapatilla de pádel para hombre con suela de espiga, puntera reforzada y parte "
            "superior de malla y sintético."
        ),
        superlativo("La zapatilla favorita de los profesionales del pádel."),
    ],
    "EV-ZAP-09": [
        buena(
            "Zapatilla de trekking para hombre en nobuk, con membrana impermeable y suela de goma."
        ),
        dentro(
            "Zapatilla de trekking de nobuk con membrana impermeable y suela de goma con "
            "tacos profundos para montaña.",
            "con tacos profundos para montaña",
        ),
        inventa("Es ideal para rutas largas con mochila pesada."),
    ],
    "EV-ZAP-10": [
        buena(
            "Zapatilla de lona orgánica sin cordones, con paneles elásticos a los lados.",
            traduce=True,
        ),
        buena(
            "Zapatilla unisex sin cordones, hecha de lona orgánica y con laterales elásticos "
            "para calzarla fácilmente.",
            traduce=True,
        ),
        inventa("Se puede lavar en la lavadora."),
    ],
    "EV-ZAP-11": [
        buena(
            "Zapatilla de fútbol sala para niño, con empeine sintético y suela de caucho que "
            "no marca la pista. Pesa 240 g."
        ),
        inventa("Su suela ofrece un agarre firme en parqué."),
    ],
    "EV-ZAP-12": [
        buena(
            "Zapatilla de tejido para caminar, con plantilla de espuma viscoelástica y suela de "
            "goma."
        ),
        dentro(
            "Zapatilla de tejido para caminar con plantilla de espuma viscoelástica que alivia "
            "el dolor de pies y suela de goma.",
            "que alivia el dolor de pies",
        ),
        inventa("Su diseño corrige la postura al andar."),
    ],
    "EV-ZAP-13": [
        buena(
            "Zapatilla de baloncesto de caña alta para hombre, con cámara de aire en el talón y "
            "suela de goma."
        ),
        inventa("La caña alta evita los esguinces de tobillo."),
        dentro(
            "Zapatilla de caña alta para baloncesto, con cámara de aire en el talón, cordones "
            "elásticos y suela de goma.",
            "cordones elásticos",
        ),
    ],
    "EV-ZAP-14": [
        buena("Zapatilla de skate de ante negro con suela vulcanizada y la puntera reforzada."),
        vacia("Zapatilla de skate negra para hombre."),
    ],
    "EV-ZAP-15": [
        buena(
            "Zapatilla de trail running con suela Vibram, tacos de 4 mm y membrana impermeable.",
            traduce=True,
        ),
        buena(
            "Zapatilla de trail para mujer con membrana impermeable y suela Vibram con tacos "
            "de 4 mm.",
            titulo="Zapatilla de trail running azul para mujer",
            traduce=True,
        ),
        dentro(
            "Zapatilla de trail con suela Vibram de tacos de 4 mm, membrana impermeable y "
            "placa protectora contra piedras.",
            "placa protectora contra piedras",
        ),
    ],
    "EV-ZAP-16": [
        buena(
            "Zapatilla de niña con empeine textil, cierre de velcro y luces en la suela que se "
            "encienden al pisar. Sus pilas no se pueden reemplazar."
        ),
        inventa("Las luces se pueden apagar con un interruptor."),
        dentro(
            "Zapatilla para niña con luces en la suela que se encienden al pisar y se recargan "
            "por USB, cierre de velcro y empeine textil.",
            "se recargan por USB",
        ),
    ],
    # camisetas
    "EV-CAM-01": [
        buena(
            "Camiseta de algodón con cuello redondo, tejido de punto y corte regular.",
            traduce=True,
        ),
        buena(
            "Camiseta básica para hombre de cuello redondo, en punto de algodón y con corte "
            "regular.",
            traduce=True,
        ),
        dentro(
            "Camiseta de cuello redondo, corte regular y algodón que no encoge al lavarla.",
            "que no encoge al lavarla",
        ),
    ],
    "EV-CAM-02": [
        buena(
            "Camiseta técnica de running para mujer, de poliéster reciclado que expulsa el "
            "sudor y con costuras planas."
        ),
        inventa("Lleva detalles reflectantes para correr de noche."),
        vacia("Camiseta fucsia de running para mujer."),
    ],
    "EV-CAM-03": [
        buena(
            "Polo de punto piqué de algodón con cuello y puños de canalé y dos botones.",
            traduce=True,
        ),
        buena(
            "Polo para hombre en piqué de algodón, con dos botones y cuello y puños de canalé.",
            titulo="Polo azul de piqué para hombre",
            traduce=True,
        ),
        inventa("Su tejido no necesita plancha."),
    ],
    "EV-CAM-04": [
        buena(
            "Camiseta de mujer de lino lavado, con cuello de pico, manga corta y corte amplio. "
            "Admite lavadora a 30 °C.",
            traduce=True,
        ),
        buena(
            "Camiseta de manga corta con cuello en V, de lino lavado y corte holgado; se lava "
            "a máquina a 30 °C.",
            traduce=True,
        ),
        dentro(
            "Camiseta de lino lavado con cuello de pico, corte amplio y manga corta, que se "
            "seca muy rápido.",
            "que se seca muy rápido",
        ),
    ],
    "EV-CAM-05": [
        buena(
            "Camiseta de algodón orgánico para niño, de manga corta y con un dinosaurio estampado."
        ),
        inventa("El estampado brilla en la oscuridad."),
        dentro(
            "Camiseta de manga corta para niño, de algodón orgánico suave que no pica, con "
            "estampado de dinosaurio.",
            "que no pica",
        ),
    ],
    "EV-CAM-06": [
        buena("Camiseta interior térmica para hombre, de manga larga y con ajuste ceñido."),
        inventa("Mantiene el cuerpo caliente hasta a diez grados bajo cero."),
        dentro(
            "Camiseta interior térmica de manga larga, de ajuste ceñido y tejido que absorbe la "
            "humedad.",
            "tejido que absorbe la humedad",
        ),
    ],
    "EV-CAM-07": [
        buena(
            "Camiseta unisex de algodón con corte ancho, hombros caídos y un estampado hecho "
            "con serigrafía.",
            traduce=True,
        ),
        buena(
            "Camiseta ancha de algodón con estampado serigrafiado y hombros caídos.",
            titulo="Camiseta oversize gris con estampado, unisex",
            traduce=True,
        ),
        inventa("El estampado es una edición limitada del artista."),
    ],
    "EV-CAM-08": [
        buena("Camiseta deportiva de tirantes para mujer, de tejido que se seca rápido."),
        dentro(
            "Camiseta de tirantes para hacer deporte, de tejido de secado rápido con "
            "protección solar.",
            "con protección solar",
        ),
    ],
    "EV-CAM-09": [
        buena("Camiseta de manga corta para hombre, ligera y de lino, para el verano."),
        inventa("No se arruga aunque la lleves todo el día."),
        superlativo("La camiseta perfecta para este verano."),
    ],
    "EV-CAM-10": [
        buena(
            "Camiseta interior de tirantes para niña, de algodón y elastano con costuras suaves."
        ),
        inventa("Es apta para pieles atópicas."),
        inventa("Se vende en un pack de tres unidades."),
    ],
    "EV-CAM-11": [
        buena(
            "Camiseta de primera capa de lana merino para mujer, con costuras planas y "
            "resistente a los olores de forma natural.",
            traduce=True,
        ),
        buena(
            "Primera capa de lana merino con costuras planas; la lana resiste los olores de "
            "manera natural.",
            titulo="Camiseta térmica de lana merino negra para mujer",
            traduce=True,
        ),
        dentro(
            "Camiseta de primera capa en lana merino con costuras planas y protección frente a "
            "los rayos ultravioleta.",
            "protección frente a los rayos ultravioleta",
        ),
    ],
    "EV-CAM-12": [
        buena("Camiseta réplica de fútbol para hombre, de poliéster y con el escudo bordado."),
        inventa("Es la equipación oficial de esta temporada."),
        dentro(
            "Camiseta de fútbol de poliéster con el escudo bordado y el nombre del jugador "
            "estampado.",
            "el nombre del jugador estampado",
        ),
    ],
    "EV-CAM-13": [
        buena(
            "Camiseta de manga corta para niños, de algodón orgánico y con cuello redondo.",
            traduce=True,
        ),
        buena(
            "Camiseta infantil de algodón orgánico con manga corta y escote redondo.",
            traduce=True,
        ),
        inventa("Lleva un bolsillo en el pecho."),
    ],
    "EV-CAM-14": [
        buena("Camiseta de mujer de manga larga y cuello barco, hecha de algodón."),
        inventa("Tiene los puños con botones."),
        vacia("Camiseta mostaza de mujer, talla M."),
    ],
    "EV-CAM-15": [
        buena(
            "Camiseta de compresión para hombre, de manga corta, en poliamida y elastano, para "
            "entrenar."
        ),
        dentro(
            "Camiseta de compresión de manga corta para entrenar, de poliamida y elastano con "
            "tratamiento antibacteriano.",
            "con tratamiento antibacteriano",
        ),
        inventa("Mejora el rendimiento en cada entrenamiento."),
    ],
    "EV-CAM-16": [
        buena("Camiseta para hombre de algodón peinado con cuello redondo."),
        superlativo("Un básico perfecto para cualquier ocasión."),
    ],
    # botellas
    "EV-BOT-01": [
        buena(
            "Botella de acero inoxidable con doble pared y aislamiento al vacío, que conserva "
            "las bebidas frías 24 h y calientes 12 h. Tapón antigoteo.",
            traduce=True,
        ),
        buena(
            "Botella térmica de doble pared de acero inoxidable con aislamiento al vacío y "
            "tapón que no gotea. Mantiene frío 24 h y caliente 12 h.",
            traduce=True,
        ),
        dentro(
            "Botella de acero inoxidable con doble pared y aislamiento al vacío, apta para "
            "lavavajillas. Mantiene las bebidas frías 24 h y calientes 12 h.",
            "apta para lavavajillas",
        ),
    ],
    "EV-BOT-02": [
        buena(
            "Botella deportiva de Tritan sin BPA con boquilla que se abre rápido. Capacidad de "
            "0,5 l."
        ),
        inventa("Su boquilla no gotea aunque la botella vaya tumbada en la mochila."),
        dentro(
            "Botella deportiva de Tritan sin BPA con boquilla de apertura rápida y filtro de "
            "agua. Capacidad de 0,5 l.",
            "y filtro de agua",
        ),
    ],
    "EV-BOT-03": [
        buena(
            "Botella de vidrio borosilicato con una funda protectora de silicona y tapón de bambú.",
            traduce=True,
        ),
        buena(
            "Botella transparente de vidrio de borosilicato, protegida con funda de silicona y "
            "cerrada con tapón de bambú.",
            traduce=True,
        ),
        dentro(
            "Botella de vidrio de borosilicato con funda de silicona y tapón de bambú con "
            "infusor para té.",
            "con infusor para té",
        ),
    ],
    "EV-BOT-04": [
        buena(
            "Botella isotérmica de acero inoxidable que conserva el frío durante 24 h.",
            traduce=True,
        ),
        buena(
            "Cantimplora térmica de acero inoxidable; mantiene frías las bebidas 24 h.",
            titulo="Botella isotérmica rosa de acero inoxidable de 500 ml",
            traduce=True,
        ),
        inventa("También mantiene las bebidas calientes."),
    ],
    "EV-BOT-05": [
        buena(
            "Botella plegable de silicona alimentaria que apenas ocupa sitio cuando está vacía. "
            "Pesa 90 g."
        ),
        inventa("Aguanta el agua hirviendo."),
        superlativo("La botella más práctica que hayas probado."),
    ],
    "EV-BOT-06": [
        buena(
            "Botella para niños de plástico sin BPA, con pajita abatible y un asa para llevarla.",
            traduce=True,
        ),
        buena(
            "Botella infantil de plástico libre de BPA con pajita plegable y asa de transporte.",
            traduce=True,
        ),
        inventa("La pajita se puede cambiar por una de repuesto."),
    ],
    "EV-BOT-07": [
        buena("Botella de aluminio con tapón de rosca; tiene una capacidad de 750 ml."),
        dentro(
            "Botella de aluminio con tapón de rosca y un mosquetón para colgarla. Capacidad "
            "de 750 ml.",
            "y un mosquetón para colgarla",
        ),
    ],
    "EV-BOT-08": [
        buena("Botella de vidrio reutilizable con una funda de neopreno."),
        inventa("La funda mantiene la bebida fría durante horas."),
        dentro(
            "Botella reutilizable de vidrio templado irrompible con funda de neopreno.",
            "templado irrompible",
        ),
    ],
    "EV-BOT-09": [
        buena(
            "Termo de acero inoxidable para café, con tapa que se abre con un botón. Mantiene el "
            "calor 8 h."
        ),
        dentro(
            "Termo para café de acero inoxidable con tapa de apertura por botón y taza "
            "incorporada. Mantiene el calor 8 h.",
            "y taza incorporada",
        ),
        inventa("Cabe en los portavasos del coche."),
    ],
    "EV-BOT-10": [
        buena(
            "Botella de vidrio de color ámbar con tapón mecánico, pensada para bebidas hechas "
            "en casa.",
            traduce=True,
        ),
        buena(
            "Botella de vidrio ámbar de 75 cl con cierre mecánico, para preparar bebidas caseras.",
            traduce=True,
        ),
        inventa("Soporta la presión de la fermentación de la cerveza."),
    ],
    "EV-BOT-11": [
        buena(
            "Botella de plástico sin BPA con filtro de carbón activo, que mejora el sabor del "
            "agua del grifo."
        ),
        inventa("Cada filtro dura dos meses."),
        dentro(
            "Botella de plástico sin BPA con filtro de carbón activo que elimina bacterias y "
            "mejora el sabor del agua del grifo.",
            "que elimina bacterias",
        ),
    ],
    "EV-BOT-12": [
        buena("Cantimplora de acero inoxidable con funda de lona y un mosquetón."),
        superlativo("Imprescindible para tus aventuras, no te la pierdas."),
        dentro(
            "Cantimplora de acero inoxidable con funda de lona acolchada y mosquetón para "
            "colgarla.",
            "acolchada",
        ),
    ],
    "EV-BOT-13": [
        buena(
            "Botella de vidrio con un motivo floral impreso y tapón de corcho.",
            traduce=True,
        ),
        buena(
            "Botella de vidrio decorada con flores impresas y cerrada con tapón de corcho.",
            traduce=True,
        ),
        dentro(
            "Botella de vidrio con motivo floral estampado y tapón de corcho natural, hecha a "
            "mano.",
            "hecha a mano",
        ),
    ],
    "EV-BOT-14": [
        buena("Botella isotérmica blanca de acero inoxidable."),
        inventa("Lleva una funda de neopreno."),
    ],
    "EV-BOT-15": [
        buena(
            "Botella plegable de silicona que se queda en 3 cm de alto. Pesa 3,5 oz.",
            traduce=True,
        ),
        buena(
            "Botella de silicona que se pliega hasta 3 cm de altura; pesa 3,5 oz.",
            titulo="Botella plegable gris de silicona de 350 ml",
            traduce=True,
        ),
        inventa("Se puede meter en el microondas."),
    ],
    "EV-BOT-16": [
        buena("Botella infantil de acero inoxidable con tapón de pajita y dibujos de animales."),
        dentro(
            "Botella para niños de acero inoxidable, con tapón de pajita antigoteo y dibujos de "
            "animales.",
            "antigoteo",
        ),
        inventa("Se puede lavar en el lavavajillas."),
    ],
    # auriculares
    "EV-AUR-01": [
        buena(
            "Auriculares inalámbricos con cancelación activa de ruido y Bluetooth 5.3; con el "
            "estuche ofrecen 30 h de autonomía y se cargan por USB-C.",
            traduce=True,
        ),
        buena(
            "Auriculares totalmente inalámbricos con Bluetooth 5.3 y cancelación activa de "
            "ruido. Dan 30 h de batería con el estuche y se cargan con USB-C.",
            traduce=True,
        ),
        dentro(
            "Auriculares inalámbricos con cancelación activa de ruido, Bluetooth 5.3 y carga "
            "inalámbrica. Autonomía de 30 h con el estuche.",
            "carga inalámbrica",
        ),
    ],
    "EV-AUR-02": [
        buena(
            "Auriculares de diadema Bluetooth plegables, con micrófono para llamadas y 40 h de "
            "autonomía."
        ),
        inventa("Incluyen un cable para usarlos sin batería."),
        dentro(
            "Auriculares de diadema plegables con Bluetooth, micrófono con cancelación de ruido "
            "para llamadas y 40 h de autonomía.",
            "con cancelación de ruido",
        ),
    ],
    "EV-AUR-03": [
        buena(
            "Auriculares intraurales con cable y conector de 3,5 mm, con el micrófono en el cable.",
            traduce=True,
        ),
        buena(
            "Auriculares de botón con cable, conector de 3,5 mm y micrófono integrado en el cable.",
            traduce=True,
        ),
        inventa("Incluyen tres tamaños de almohadillas."),
    ],
    "EV-AUR-04": [
        buena(
            "Auriculares deportivos inalámbricos con ganchos para las orejas, resistentes al "
            "sudor (IPX5) y con 8 h de autonomía.",
            traduce=True,
        ),
        buena(
            "Auriculares inalámbricos para deporte con ganchos de oreja, resistencia al sudor "
            "IPX5 y 8 h de batería.",
            traduce=True,
        ),
        dentro(
            "Auriculares inalámbricos para deporte con ganchos para la oreja, resistentes al "
            "sudor y sumergibles en la piscina. Autonomía de 8 h.",
            "sumergibles en la piscina",
        ),
    ],
    "EV-AUR-05": [
        buena(
            "Auriculares de diadema para jugar a videojuegos, con micrófono desmontable, luces "
            "LED y conexión USB."
        ),
        inventa("Tienen sonido envolvente 7.1."),
        superlativo("Hazte con ellos y domina cada partida."),
    ],
    "EV-AUR-06": [
        buena(
            "Auriculares de conducción ósea que dejan libres los oídos, con 6 h de música, "
            "protección IP67 y un peso de 29 g.",
            traduce=True,
        ),
        buena(
            "Auriculares de conducción ósea con los oídos abiertos: 6 h de música, IP67 y "
            "29 g de peso.",
            traduce=True,
        ),
        inventa("Se pueden usar para nadar en el mar."),
    ],
    "EV-AUR-07": [
        buena(
            "Auriculares inalámbricos con estuche de carga: 6 h por carga y 24 h en total con "
            "el estuche."
        ),
        inventa("El estuche se carga sin cables."),
        dentro(
            "Auriculares inalámbricos con estuche de carga y resistencia al agua: 6 h por carga y "
            "24 h en total con el estuche.",
            "y resistencia al agua",
        ),
    ],
    "EV-AUR-08": [
        buena("Auriculares infantiles de diadema con volumen limitado a 85 dB y cable de 1,2 m."),
        dentro(
            "Auriculares de diadema para niños con volumen limitado a 85 dB, cable de 1,2 m y "
            "diadema irrompible.",
            "diadema irrompible",
        ),
    ],
    "EV-AUR-09": [
        buena("Auriculares intraurales con Bluetooth y una autonomía de 20 h."),
        inventa("Vienen con tres tamaños de almohadillas."),
        vacia("Auriculares Bluetooth blancos intraurales."),
    ],
    "EV-AUR-10": [
        buena(
            "Auriculares de estudio cerrados, con drivers de 50 mm y cable en espiral de 3 m.",
            traduce=True,
        ),
        buena(
            "Auriculares cerrados para estudio con altavoces de 50 mm y cable rizado de 3 m.",
            titulo="Auriculares de estudio con cable plateados",
            traduce=True,
        ),
        inventa("Las almohadillas de espuma con memoria se pueden cambiar."),
    ],
    "EV-AUR-11": [
        buena("Auriculares deportivos negros con ganchos, Bluetooth 5.3 y 10 h de autonomía."),
        inventa("Resisten el sudor y la lluvia."),
        dentro(
            "Auriculares para hacer deporte, con ganchos para la oreja ajustables, Bluetooth 5.3 "
            "y 10 h de autonomía.",
            "ajustables",
        ),
    ],
    "EV-AUR-12": [
        buena(
            "Auriculares de diadema verdes, plegables y con cancelación activa de ruido; 35 h "
            "de autonomía y carga rápida: 10 min dan 3 h."
        ),
        superlativo("Sin duda los mejores del mercado."),
    ],
    "EV-AUR-13": [
        buena(
            "Auriculares inalámbricos para niños, con volumen limitado a 85 dB y 15 h de "
            "autonomía.",
            traduce=True,
        ),
        buena(
            "Cascos infantiles sin cables con el volumen limitado a 85 dB y una batería de 15 h.",
            traduce=True,
        ),
        dentro(
            "Auriculares inalámbricos para niños con volumen limitado a 85 dB, orejeras "
            "lavables y 15 h de autonomía.",
            "orejeras lavables",
        ),
    ],
    "EV-AUR-14": [
        buena(
            "Dos auriculares con cable, con conector USB-C y mando en el cable.",
            traduce=True,
        ),
        buena(
            "Pack de 2 auriculares de botón con cable USB-C y control en el cable.",
            traduce=True,
        ),
        inventa("El mando tiene micrófono para llamadas."),
    ],
    "EV-AUR-15": [
        buena("Auriculares grises de conducción ósea con Bluetooth 5.3, 8 h de autonomía y 28 g."),
        inventa("Tienen resistencia al agua IP68."),
        dentro(
            "Auriculares de conducción ósea con Bluetooth 5.3, micrófono para llamadas, 8 h de "
            "autonomía y 28 g de peso.",
            "micrófono para llamadas",
        ),
    ],
    "EV-AUR-16": [
        buena(
            "Auriculares inalámbricos negros con Bluetooth 5.0, estuche de carga y 18 h de "
            "autonomía."
        ),
        dentro(
            "Auriculares inalámbricos con Bluetooth 5.0, estuche de carga, control táctil y "
            "18 h de autonomía.",
            "control táctil",
        ),
    ],
    # sartenes
    "EV-SAR-01": [
        buena(
            "Sartén de aluminio forjado con antiadherente sin PFOA, apta para todo tipo de "
            "cocinas, también de inducción. Mango de tacto suave.",
            traduce=True,
        ),
        buena(
            "Sartén antiadherente sin PFOA de aluminio forjado, válida para todas las placas "
            "incluida la inducción, con mango suave al tacto.",
            traduce=True,
        ),
        dentro(
            "Sartén de aluminio forjado con revestimiento antiadherente sin PFOA y mango de "
            "tacto suave apto para horno.",
            "apto para horno",
        ),
    ],
    "EV-SAR-02": [
        buena(
            "Sartén de hierro fundido prensado de 24 cm, que se puede usar en inducción y en el "
            "horno."
        ),
        inventa("Viene curada de fábrica."),
        dentro(
            "Sartén de hierro fundido prensado con asa auxiliar, apta para inducción y para horno.",
            "con asa auxiliar",
        ),
    ],
    "EV-SAR-03": [
        buena(
            "Sartén de acero inoxidable con triple fondo, compatible con inducción y con el "
            "mango remachado.",
            traduce=True,
        ),
        buena(
            "Sartén de acero inoxidable de fondo triple y mango remachado, apta para cocinas "
            "de inducción.",
            traduce=True,
        ),
        inventa("Se puede lavar en el lavavajillas."),
    ],
    "EV-SAR-04": [
        buena(
            "Sartén con revestimiento cerámico sin PFAS y cuerpo de aluminio. No sirve para "
            "inducción.",
            traduce=True,
        ),
        buena(
            "Sartén verde de aluminio con revestimiento de cerámica libre de PFAS; no es "
            "compatible con inducción.",
            traduce=True,
        ),
        dentro(
            "Sartén de aluminio con revestimiento cerámico sin PFAS que aguanta temperaturas "
            "muy altas. No es apta para inducción.",
            "que aguanta temperaturas muy altas",
        ),
    ],
    "EV-SAR-05": [
        buena(
            "Sartén de aluminio fundido con fondo de inducción y un antiadherente de tres capas."
        ),
        inventa("El mango es desmontable."),
        alt(
            "Sartén de aluminio fundido con antiadherente de tres capas y fondo de inducción. "
            "Una sartén espectacular para tu cocina.",
            aprobada=False,
            criterios=["C05"],
            nota="ampliación 48: tono que el código de C05 no ve: «Una sartén espectacular»",
        ),
    ],
    "EV-SAR-06": [
        buena(
            "Sartén de acero al carbono sin revestimiento, apta para inducción, que necesita "
            "curado antes de usarla la primera vez."
        ),
        inventa("Con el uso se vuelve antiadherente."),
        dentro(
            "Sartén de acero al carbono sin revestimiento, ligera y apta para inducción; hay que "
            "curarla antes de usarla.",
            "ligera",
        ),
    ],
    "EV-SAR-07": [
        buena("Wok de acero al carbono de 32 cm con mango de madera; no sirve para inducción."),
        dentro(
            "Wok de acero al carbono con mango de madera y tapa de cristal. No es apto para "
            "inducción.",
            "y tapa de cristal",
        ),
    ],
    "EV-SAR-08": [
        buena(
            "Sartén de acero inoxidable de 24 cm con base encapsulada, que sirve para inducción."
        ),
        inventa("Reparte el calor de forma uniforme por toda la base."),
        dentro(
            "Sartén de acero inoxidable con base encapsulada y remaches reforzados, apta para "
            "inducción.",
            "y remaches reforzados",
        ),
    ],
    "EV-SAR-09": [
        buena(
            "Sartén grill cuadrada de hierro fundido de 28 x 28 cm, precurada y lista para "
            "inducción.",
            traduce=True,
        ),
        buena(
            "Sartén grill de hierro fundido, cuadrada y ya curada, que funciona en cocinas de "
            "inducción.",
            traduce=True,
        ),
        inventa("Sus estrías marcan la carne como en una barbacoa."),
    ],
    "EV-SAR-10": [
        buena(
            "Juego de tres sartenes antiadherentes de aluminio de 18, 22 y 26 cm, aptas para "
            "inducción."
        ),
        inventa("Los mangos son de madera."),
        vacia("Juego de 3 sartenes de aluminio."),
    ],
    "EV-SAR-11": [
        buena(
            "Sartén de aluminio de 22 cm con revestimiento de piedra, que se puede usar en "
            "inducción."
        ),
        dentro(
            "Sartén de aluminio con revestimiento de piedra, apta para inducción y para horno.",
            "y para horno",
        ),
    ],
    "EV-SAR-12": [
        buena(
            "Sartén de hostelería de acero inoxidable 18/10, con fondo difusor y apta para "
            "inducción."
        ),
        superlativo("Es la sartén definitiva para tu cocina."),
    ],
    "EV-SAR-13": [
        buena(
            "Crepera de aluminio fundido con revestimiento antiadherente, compatible con todos "
            "los fuegos, incluida la inducción.",
            traduce=True,
        ),
        buena(
            "Sartén para crepes de fundición de aluminio con antiadherente, que sirve para "
            "todo tipo de fuegos e inducción.",
            traduce=True,
        ),
        dentro(
            "Crepera de aluminio fundido con revestimiento antiadherente y espátula de madera "
            "incluida, apta para inducción.",
            "y espátula de madera incluida",
        ),
    ],
    "EV-SAR-14": [
        buena(
            "Sartén honda de aluminio antiadherente con tapa de vidrio templado; pesa 1,4 kg y "
            "es apta para inducción."
        ),
        inventa("La tapa tiene una válvula para el vapor."),
        dentro(
            "Sartén honda de aluminio con antiadherente, tapa de vidrio templado y mango que no "
            "se calienta. Pesa 1,4 kg y es apta para inducción.",
            "mango que no se calienta",
        ),
    ],
    "EV-SAR-15": [
        buena(
            "Sartén pequeña antiadherente para un huevo, de 12 cm, con cuerpo de aluminio. No "
            "es apta para inducción.",
            traduce=True,
        ),
        buena(
            "Pequeña sartén de aluminio con antiadherente, para freír un huevo; no sirve para "
            "inducción y pesa 0,5 lb.",
            traduce=True,
        ),
        inventa("También sirve para hacer tortitas."),
    ],
    "EV-SAR-16": [
        buena("Sartén de aluminio de 24 cm con antiadherente y apta para inducción."),
        atributo_falso("material", "acero inoxidable", nota="el origen dice aluminio"),
        inventa("Sirve para cocinar sin aceite."),
    ],
}
