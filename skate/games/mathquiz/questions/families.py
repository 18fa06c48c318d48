"""The MathQuiz story families: each one's vocabulary, allowed values and sentence templates.

:data:`FAMILIES` maps each of :data:`KINDS` (shopping, savings, temperature, ...) to its
:class:`~skate.games.mathquiz.questions.templates.Family`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from skate.games.mathquiz.questions.templates import Family, _family

_FAMILIES = [
    _family(
        "shopping",
        0,
        None,
        {
            "place": (
                "market",
                "mall",
                "bookshop",
                "flea market",
                "bakery",
                "hardware store",
                "corner shop",
                "toy shop",
                "garden centre",
                "night market",
            ),
            "thing": (
                "a scarf",
                "a notebook",
                "a lamp",
                "some bread",
                "a potted plant",
                "a kite",
                "a phone case",
                "a jigsaw puzzle",
                "a teapot",
                "a belt",
                "a city map",
                "a sun hat",
                "a board game",
            ),
            "goods": ("mugs", "candles", "postcards", "pens", "pairs of socks", "apples", "keyrings", "batteries"),
            "relative": ("aunt", "uncle", "grandmother", "grandfather", "neighbour", "cousin", "godmother"),
        },
        (),
        {
            "set": (
                "{name} [goes|heads|walks] to the {place} with ${a} in {his} [wallet|pocket|purse].",
                "{name} has ${a} to spend at the {place}.",
                "[On Saturday|One morning|After school|At the weekend], {name} takes ${a} to the {place}.",
            ),
            "setmul": ("{name} [brings|takes] {a} gift vouchers worth ${b} each to the {place}.",),
            "sub": (
                "{He} [spends|pays] ${a} on {thing}.",
                "[Then|Next|After that], {he} [buys|picks up] {thing} for ${a}.",
                "{He} [treats {himself} to|splurges on] {thing} that costs ${a}.",
            ),
            "add": (
                "{He} finds ${a} [in an old coat|under a bench|at the bottom of {his} bag].",
                "{His} {relative} [gives|hands] {him} ${a}.",
                "{He} [sells|returns] {thing} and [gets|receives] ${a} [back|for it].",
            ),
            "submul": (
                "{He} [buys|orders] {a} {goods} at ${b} each.",
                "{He} [picks up|chooses] {a} {goods} that cost ${b} apiece.",
            ),
            "div": ("{He} [splits|divides] {his} money equally into {a} envelopes and keeps only one of them.",),
            "share": ("{He} [shares|splits] {his} money equally [between|among] {himself} and {a} [friends|cousins].",),
            "frac": (
                "{He} spends {frac} of {his} money on {thing}.",
                "[Then|Later] {he} [uses|gives away] {frac} of what {he} has left.",
            ),
            "pctoff": (
                "{He} spends {a}% of {his} remaining money on {thing}.",
                "{He} [gives|donates] {a}% of the money {he} still has to a [charity|street musician].",
            ),
            "note": (
                "The {place} is {a} [minutes|blocks] from {his} home.",
                "{friend} [spends|pays] ${a} there as well.",
                "The bus fare would be ${a}, but {name} [walks|cycles].",
            ),
            "ask": (
                "How many dollars does {name} have [left|now|at the end]?",
                "How much money, in dollars, does {name} have left?",
                "How much money, in dollars, is left in {name}'s [wallet|pocket|purse]?",
                "In dollars, how much [does {name} still have|is left for {name}]?",
                "What amount, in dollars, does {name} [go|walk] home with?",
            ),
        },
    ),
    _family(
        "savings",
        None,
        None,
        {
            "month": ("January", "March", "May", "July", "September", "November"),
            "relative": ("aunt", "uncle", "grandmother", "grandfather", "godfather", "older sister"),
            "purchase": (
                "a new phone",
                "a dentist visit",
                "car repairs",
                "a laptop",
                "concert tickets",
                "a winter coat",
            ),
        },
        (),
        {
            "set": (
                "{name} opens a savings account with ${a}.",
                "[At the start of {month}|On the first of {month}], {name}'s bank account holds ${a}.",
                "{name} has ${a} in {his} bank account.",
                "{name}'s [savings|current] account starts the year at ${a}.",
            ),
            "setneg": (
                "{name}'s bank account is overdrawn by ${a}.",
                "[At the start of {month}|On the first of {month}], {name} owes {his} bank ${a}.",
            ),
            "setmul": ("{name} opens an account with {a} [cheques|gift cards] of ${b} each.",),
            "add": (
                "{He} [deposits|pays in] ${a}.",
                "A [tax refund|birthday gift|work bonus] of ${a} [lands in|is paid into] the account.",
                "{His} {relative} [transfers|sends] ${a} to the account.",
                "{He} [sells an old guitar|tutors a neighbour|walks dogs] and [banks|pays in] the ${a} "
                "[it brings|{he} earns].",
            ),
            "sub": (
                "{He} [withdraws|takes out] ${a}.",
                "A [rent payment|repair bill|phone bill] of ${a} is [paid from|taken out of] the account.",
                "{He} [pays for|covers] {purchase} with ${a} from the account.",
            ),
            "addmul": (
                "{He} deposits ${b} [every week|each week] for {a} weeks.",
                "For {a} months {he} [pays in|saves] ${b} a month.",
                "{His} [employer|weekend job] pays ${b} into the account on each of {a} [Fridays|paydays].",
            ),
            "submul": (
                "A [gym|streaming|phone] plan takes ${b} a month from the account for {a} months.",
                "{He} withdraws ${b} on each of {a} [days|trips].",
                "Each of {a} [invoices|bills] takes ${b} out of the account.",
            ),
            "pcton": (
                "The bank adds {a}% interest to the balance.",
                "After a year, the balance grows by {a}% in interest.",
                "Interest of {a}% is [credited|added] at the end of the year.",
            ),
            "pctoff": (
                "{He} spends {a}% of the balance on {purchase}.",
                "{He} moves {a}% of the balance into a [pension fund|second account].",
            ),
            "mul": (
                "A lucky [investment|prize draw] makes the balance {times} as large.",
                "A [share sale|good investment] leaves the balance at {times} what it was.",
            ),
            "rateadd": (
                "{He} saves ${a} every {b} days for {c} days and pays it all into the account.",
                "Over {c} days, {he} [banks|deposits] ${a} every {b} days.",
            ),
            "ratesub": (
                "A [loan|subscription] takes ${a} every {b} days for {c} days.",
                "For {c} days, a standing order [removes|withdraws] ${a} every {b} days.",
            ),
            "note": (
                "{friend} keeps ${a} in a jar at home.",
                "The bank branch is {a} [minutes|blocks] from {name}'s house.",
                "{name}'s [sister|cousin] saves ${a} a month at a different bank.",
                "{friend}'s account pays {a}% interest, but {friend} banks elsewhere.",
            ),
            "ask": (
                "What is the balance of {name}'s account now, in dollars?",
                "In dollars, what is the account balance [now|at the end]?",
                "What does {name}'s bank balance come to, in dollars?",
                "What balance, in dollars, does {name}'s account show [at the end|after all this]?",
            ),
        },
    ),
    _family(
        "temperature",
        -273,
        5000,
        {
            "items": (
                "metal sample",
                "test chamber",
                "furnace",
                "steel bar",
                "lab oven",
                "probe",
                "reactor vessel",
                "glass kiln",
                "cold store",
                "brine tank",
                "copper pipe",
                "climate cabinet",
                "sand bath",
                "vacuum flask",
                "smelting pot",
            ),
            "time": ("dawn", "midnight", "noon", "sunrise", "nine o'clock", "the start of the shift"),
            "heater": ("heater", "heat lamp", "burner", "hot plate", "boiler", "heating coil"),
            "cooler": ("fan", "cooling unit", "cold draught", "chiller", "ice pack", "water jacket"),
            "tick": ("minutes", "seconds"),
        },
        ("items",),
        {  # a word used twice in a sentence is read the same twice
            "set": (
                "[At {time}|To begin with|When the test starts], the {items} is at {a} degrees.",
                "A thermometer in the {items} [reads|shows] {a} degrees.",
                "The {items} starts the [day|experiment] at {a} degrees.",
                "[A technician|A student|{friend}] records {a} degrees in the {items} [at {time}|first thing].",
            ),
            "setneg": (
                "[At {time}|To begin with|When the test starts], the {items} is at {a} degrees below zero.",
                "A thermometer in the {items} [reads|shows] minus {a} degrees.",
                "[A technician|A student|{friend}] records {a} degrees below zero in the {items}.",
            ),
            "add": (
                "It [warms|heats] up by {a} degrees.",
                "[Over the next hour|By noon|After that], the temperature rises {a} degrees.",
                "The {heater} [pushes|lifts|brings] it up {a} degrees.",
                "The reading [climbs|goes up|jumps] by {a} degrees.",
            ),
            "sub": (
                "It cools [down|off] by {a} degrees.",
                "[Then|Later|Overnight], the temperature [falls|drops] {a} degrees.",
                "The {cooler} [takes|knocks] {a} degrees off it.",
                "The reading [slips|dips|sinks] by {a} degrees.",
            ),
            "addmul": (
                "It warms {b} degrees [an hour for {a} hours|a day for {a} days|a minute for {a} minutes].",
                "For {a} hours the temperature climbs {b} degrees each hour.",
                "On each of {a} days it gains {b} degrees.",
                "The {heater} adds {b} degrees in each of the next {a} [hours|days|minutes].",
            ),
            "submul": (
                "It cools {b} degrees [an hour for {a} hours|a day for {a} days|a minute for {a} minutes].",
                "For {a} hours the temperature sinks {b} degrees each hour.",
                "On each of {a} days it loses {b} degrees.",
                "The {cooler} [removes|takes away] {b} degrees in each of the next {a} [hours|days|minutes].",
            ),
            "rateadd": (
                "The {heater} raises it {a} degrees every {b} [minutes for {c} minutes|seconds for {c} seconds].",
                "Over {c} {tick} it gains {a} degrees every {b} {tick}.",
                "Every {b} [minutes for the next {c} minutes|hours for the next {c} hours], "
                "the reading [rises|creeps up] {a} degrees.",
            ),
            "ratesub": (
                "The {cooler} lowers it {a} degrees every {b} [minutes for {c} minutes|seconds for {c} seconds].",
                "Over {c} {tick} it loses {a} degrees every {b} {tick}.",
                "Every {b} [minutes for the next {c} minutes|hours for the next {c} hours], "
                "the reading [falls|drops back] {a} degrees.",
            ),
            "note": (
                "The room around it stays at {a} degrees.",
                "The [reading|display] is logged every {a} minutes.",
                "{friend} checks the {items} {a} times [a day|a shift].",
                "The {heater} is {a} years old.",
            ),
            "ask": (
                "What temperature, in degrees, does the {items} reach [in the end|at the end]?",
                "What is the temperature of the {items} now, in degrees?",
                "[At the end|Finally], what does the thermometer in the {items} read, in degrees?",
                "What is the final temperature of the {items}, in degrees?",
            ),
        },
    ),
    _family(
        "game",
        None,
        None,
        {
            "game": (
                "quiz",
                "board game",
                "video game",
                "trivia night",
                "card game",
                "spelling contest",
                "pinball match",
                "darts match",
            )
        },
        ("game",),
        {
            "set": (
                "{name} [starts|begins] a {game} with {a} points.",
                "In a {game}, {name} has {a} points [after the first round|at half time].",
            ),
            "setneg": (
                "{name} [starts|begins] a {game} {a} points below zero.",
                "After a bad first round of a {game}, {name}'s score is minus {a} points.",
            ),
            "setmul": (
                "In the opening stage of a {game}, {name} [wins|collects] {a} [tokens|cards] worth {b} points each.",
            ),
            "add": (
                "{He} [wins|earns|scores] {a} more points.",
                "A [lucky|clever|bold] move [earns|brings] {him} {a} points.",
            ),
            "sub": (
                "{He} loses {a} points [on a wrong answer|for a mistake|on a bad roll].",
                "A penalty [costs {him}|takes away] {a} points.",
            ),
            "addmul": (
                "{He} [answers|gets] {a} [questions|puzzles] right, [worth|at] {b} points each.",
                "{He} [scores|lands] {a} [hits|shots] worth {b} points apiece.",
            ),
            "submul": ("{He} [misses|fails] {a} [questions|turns], [losing|at a cost of] {b} points each.",),
            "mul": (
                "A bonus [round|card] multiplies {his} score by {a}.",
                "After a golden round {his} score is {times} as big.",
            ),
            "pcton": (
                "A [streak|combo] bonus adds {a}% to {his} score.",
                "{His} score [goes up|grows] by {a}% thanks to a bonus.",
            ),
            "pctoff": ("A penalty card [wipes out|removes] {a}% of {his} points.",),
            "frac": ("{He} [loses|gives up] {frac} of {his} points [in a trade|on a risky bet].",),
            "note": (
                "{friend} [finishes|ends] with {a} points.",
                "The {game} [lasts|runs for] {a} minutes.",
                "There are {a} players [in all|at the table].",
            ),
            "ask": (
                "What is {name}'s score [at the end|when the {game} ends|now]?",
                "How many points does {name} [finish with|have at the end]?",
                "What score does {name} end the {game} with?",
            ),
        },
    ),
    _family(
        "inventory",
        0,
        None,
        {
            "items": (
                "crates",
                "boxes of nails",
                "sacks of rice",
                "tyres",
                "cartons of juice",
                "rolls of fabric",
                "bags of cement",
                "folding chairs",
                "bicycles",
                "desk lamps",
                "drums of oil",
                "reams of paper",
            ),
            "site": ("warehouse", "depot", "storeroom", "stockroom", "supply shed", "distribution centre"),
            "town": ("Porto", "Lyon", "Tampere", "Gdansk", "Malaga", "Leeds", "Graz"),
        },
        ("items", "site"),
        {
            "set": (
                "A {site} [in {town}|on the edge of town|by the harbour] holds {a} {items}.",
                "[On Monday|At the start of the month|Before the sale], the {site} has {a} {items} in stock.",
                "There are {a} {items} in the {site}.",
            ),
            "setmul": (
                "The {site} has {a} shelves, each holding {b} {items}.",
                "{a} pallets of {b} {items} each are stacked in the {site}.",
            ),
            "add": (
                "A [truck|van|supplier] delivers {a} more {items}.",
                "[Then|Later], {a} {items} [arrive|come in] from the factory.",
            ),
            "sub": (
                "{a} {items} are [sold|shipped out|sent to a shop].",
                "[A customer|A school|A hotel] [orders|buys] {a} {items}.",
            ),
            "addmul": (
                "A [truck|lorry|freight train] brings {a} pallets with {b} {items} on each.",
                "{a} [vans|boats] each [drop off|unload] {b} {items}.",
            ),
            "submul": (
                "{a} [shops|customers|stores] each [order|take] {b} {items}.",
                "The [staff|team] [loads|fills] {a} trucks with {b} {items} each.",
            ),
            "pctoff": (
                "{a}% of the {items} are [shipped|sold] [that week|in a sale].",
                "A [recall|clearance sale] removes {a}% of the stock.",
            ),
            "frac": (
                "{Frac} of the {items} [turn out to be|are found] damaged and are thrown away.",
                "[Staff find that|An inspector finds that] {frac} of the {items} are broken, and those are scrapped.",
            ),
            "rateadd": ("The factory sends {a} {items} every {b} days for {c} days.",),
            "ratesub": ("A [conveyor|packing line] ships out {a} {items} every {b} minutes for {c} minutes.",),
            "note": (
                "The {site} employs {a} [workers|people].",
                "Each [truck|van] can carry up to {a} tonnes.",
                "The {site} [opened|was built] {a} years ago.",
            ),
            "ask": (
                "How many {items} are [in the {site}|left in the {site}|in stock] now?",
                "How many {items} does the {site} hold [at the end|after all this]?",
                "[At the end|Finally], how many {items} are [left|in stock]?",
            ),
        },
    ),
    _family(
        "sharing",
        0,
        None,
        {
            "items": (
                "marbles",
                "stickers",
                "cookies",
                "cherries",
                "seashells",
                "trading cards",
                "pencils",
                "grapes",
                "buttons",
                "chestnuts",
                "balloons",
                "plums",
                "crayons",
                "acorns",
            )
        },
        ("items",),
        {
            "set": (
                "{name} [has|collects|gathers] {a} {items}.",
                "[At the fair|At the beach|After the party], {name} [ends up with|brings home] {a} {items}.",
            ),
            "setmul": ("{name} has {a} [bags|jars|boxes] with {b} {items} in each.",),
            "add": ("{friend} [gives|hands] {him} {a} more {items}.", "{He} [finds|wins|picks up] {a} more."),
            "sub": ("{He} [loses|misplaces|drops] {a} of them.", "{He} gives {a} of them to {friend}."),
            "addmul": ("{He} [buys|gets] {a} packs of {b} {items}.",),
            "submul": (
                "{He} gives {b} {items} to each of {his} {a} [cousins|classmates|neighbours].",
                "{He} [hands|passes] out {b} to each of {a} friends.",
            ),
            "share": (
                "{He} [shares|splits] them equally [between|among] {himself} and {a} friends and keeps {his} share.",
            ),
            "div": (
                "{He} [packs|sorts] them equally into {a} [bags|boxes|jars] and keeps just one of them.",
                "{He} [divides|splits] them into {a} equal piles and keeps one pile.",
            ),
            "frac": (
                "{He} gives away {frac} of them.",
                "{He} [trades|swaps] {frac} of {his} {items} for a [comic|yo-yo|kite].",
            ),
            "note": (
                "{friend} has {a} {items} too.",
                "{His} [box|jar|bag] could hold up to {a} of them.",
                "{friend} is {a} years old.",
            ),
            "ask": (
                "How many {items} does {name} [have now|have left|end up with|keep]?",
                "[In the end|At the end], how many {items} does {name} have?",
            ),
        },
    ),
    _family(
        "recipes",
        0,
        None,
        {
            "items": (
                "flour",
                "sugar",
                "butter",
                "oats",
                "cocoa",
                "grated cheese",
                "ground almonds",
                "rice",
                "honey",
                "cream",
            ),
            "dish": ("cookies", "muffins", "pancakes", "bread rolls", "scones", "dumplings", "waffles", "tarts"),
        },
        ("items", "dish"),
        {
            "set": (
                "{name}'s recipe for {dish} [uses|calls for|needs] {a} grams of {items}.",
                "{name} [finds|picks] a recipe for {dish} that [uses|needs] {a} grams of {items}.",
            ),
            "setmul": (
                "{name}'s recipe for {dish} [uses|asks for] {a} [scoops|spoonfuls] of {items} at {b} grams each.",
            ),
            "scale": (
                "The recipe makes {a} {dish}, but {he} [wants|needs] {b}.",
                "{He} [scales|adjusts] the recipe from {a} {dish} to {b} {dish}.",
            ),
            "mul": (
                "{He} [decides|plans] to make {a} batches instead of one.",
                "{He} [multiplies|scales up] every amount by {a}.",
            ),
            "div": ("{He} [makes|bakes] a smaller batch, dividing every amount by {a}.",),
            "add": ("{He} adds {a} [extra grams|grams more] [for dusting|to be safe|for the topping].",),
            "sub": ("{He} [uses|puts in] {a} grams less because {his} [tin|bowl|tray] is small.",),
            "addmul": (
                "{He} also [adds|makes] {a} [toppings|glazes|fillings] that need {b} grams each.",
                "Each of {a} [trays|tins] needs {b} more grams [for the base|for a crust].",
            ),
            "pcton": ("{He} [adds|uses] {a}% more {items} than the recipe says.",),
            "pctoff": ("{He} [cuts|reduces] the {items} by {a}% to make it [lighter|healthier|less rich].",),
            "note": (
                "The [oven|stove] timer is set for {a} minutes.",
                "{friend} [brings|offers] {a} grams of [jam|nuts] [too|as well].",
                "{name}'s kitchen has {a} [jars|tins] on the shelf.",
            ),
            "ask": (
                "How many grams of {items} does {name} [need|use] [in the end|altogether|now]?",
                "[In the end|Altogether], how many grams of {items} does {name} need?",
            ),
        },
    ),
    _family(
        "travel",
        0,
        None,
        {
            "dest": (
                "the lake",
                "the old mill",
                "a hill fort",
                "the coast",
                "a mountain hut",
                "the next village",
                "a waterfall",
                "the lighthouse",
                "a ruined abbey",
                "the border",
            ),
            "errand": (
                "fetch a lost glove",
                "look for a dropped map",
                "help a friend",
                "take a photo",
                "pick up a forgotten bottle",
            ),
            "boat": ("ferry", "canoe", "barge", "rowing boat"),
            "lift": ("friend", "farmer", "neighbour", "lorry driver"),
        },
        (),
        {
            "set": (
                "{name} [cycles|rides|hikes] {a} kilometers from home toward {dest}.",
                "[On Sunday|Early one morning|For a race], {name} sets off from home and covers {a} kilometers.",
                "{name} leaves {his} [house|flat|village] and [travels|goes] {a} kilometers "
                "[north|east|along the river].",
            ),
            "setmul": ("{name} [drives|rides] away from home for {a} hours at {b} kilometers per hour.",),
            "add": (
                "[Then|After a break|Later] {he} [walks|jogs|cycles] another {a} kilometers [onward|ahead].",
                "{He} [keeps going|carries on|presses on] for {a} more kilometers.",
                "A {lift} gives {him} a lift {a} kilometers farther [away|along the road].",
            ),
            "sub": (
                "{He} turns back {a} kilometers to {errand}.",
                "{He} [retreats|doubles back] {a} kilometers [toward home|the way {he} came].",
            ),
            "addmul": (
                "{He} [rides|cycles|drives] on for {a} hours at {b} kilometers [an hour|per hour].",
                "Next, {he} takes a [train|bus] onward for {a} hours at {b} kilometers per hour.",
                "{He} [sails|floats] on in a {boat} for {a} hours, making {b} kilometers [each hour|an hour].",
            ),
            "submul": (
                "{He} heads back toward home for {a} hours at {b} kilometers per hour.",
                "For {a} hours {he} [drives|rides] homeward at {b} kilometers [an hour|per hour].",
            ),
            "rateadd": (
                "{He} [runs|skates|paddles] on, {a} kilometers every {b} minutes for {c} minutes.",
                "{He} [jogs|rows] onward for {c} minutes, covering {a} kilometers every {b} minutes.",
            ),
            "ratesub": (
                "{He} walks back toward home, {a} kilometers every {b} minutes for {c} minutes.",
                "For {c} minutes {he} [trots|paddles] back toward home at {a} kilometers every {b} minutes.",
            ),
            "frac": (
                "{He} [retraces|walks back] {frac} of the distance [so far|covered so far].",
                "Lost, {he} goes back over {frac} of the way toward home.",
            ),
            "pctoff": (
                "{He} heads back over {a}% of the distance from home.",
                "{He} [backtracks|returns] {a}% of the way toward home.",
            ),
            "pcton": (
                "{He} pushes on and adds another {a}% to {his} distance from home.",
                "By evening {he} has [stretched|increased] {his} distance from home by {a}%.",
            ),
            "note": (
                "{His} [bike|backpack] weighs {a} kilograms.",
                "{friend} lives {a} kilometers [away|from the station].",
                "The [route|trail] has {a} signposts.",
                "{He} [drinks|carries] {a} [cups of tea|bottles of water] on the way.",
            ),
            "ask": (
                "How many kilometers from home is {name} [now|at the end]?",
                "How far from home, in kilometers, does {name} end up?",
                "[At the end|Finally], how many kilometers "
                "[separate {name} from home|is {name} from {his} starting point]?",
                "What is {name}'s distance from home at the end, in kilometers?",
            ),
        },
    ),
    _family(
        "geometry",
        0,
        None,
        {
            "items": (
                "garden",
                "yard",
                "field",
                "courtyard",
                "playground",
                "parking lot",
                "rooftop",
                "sports ground",
                "meadow",
                "schoolyard",
                "cherry orchard",
                "paddock",
                "market square",
            ),
            "owner": ("A farmer", "The council", "A school", "A hotel", "A museum"),
        },
        ("items",),
        {
            "setmul": (
                "A rectangular {items} is {b} meters long and {a} meters wide.",
                "The {items} is a rectangle of {b} meters by {a} meters.",
                "{owner} owns a rectangular {items} measuring {b} by {a} meters.",
            ),
            "set": (
                "A {items} [covers|has an area of] {a} square meters.",
                "{owner} owns a {items} of {a} square meters.",
                "The {items} has a total area of {a} square meters.",
            ),
            "subsq": (
                "A square [pond|shed|fountain|sandbox] with sides of {a} meters is built on it.",
                "[Then|Next], a square [patio|flower bed] {a} meters on each side is laid in the {items}.",
                "Workers [put up|build] a square [hut|kiosk|gazebo] {a} meters on a side there.",
            ),
            "submul": (
                "A [path|gravel strip] {b} meters long and {a} meters wide is laid across it.",
                "A rectangular [pool|greenhouse|barn] of {b} meters by {a} meters is [built|put up] there.",
                "[Tiles|Paving stones|Solar panels] now cover a {b} by {a} meter patch of it.",
            ),
            "addmul": (
                "The {items} is [extended|enlarged] by a strip of {b} by {a} meters.",
                "A neighbouring [strip|plot] of {b} by {a} meters is [bought|added] to the {items}.",
            ),
            "addsq": (
                "A square [lot|corner plot] {a} meters on each side is [added|joined] to it.",
                "{owner} buys a square patch {a} meters on a side next to it.",
            ),
            "div": (
                "The [unused|free] ground is split into {a} equal parts, and all but one part is sold.",
                "{owner} keeps one of {a} equal shares of the unused ground and rents out the rest.",
            ),
            "pctoff": (
                "{a}% of the [remaining|unused] ground is [covered with gravel|planted with trees|paved].",
                "[Builders|Gardeners] take over {a}% of the free ground.",
            ),
            "frac": (
                "{Frac} of the unused ground [is turned into a vegetable bed|gets a wooden deck].",
                "[Weeds|Wild flowers] soon cover {frac} of the free ground.",
            ),
            "note": (
                "The {items} [lies|is] {a} meters from the [road|river|school].",
                "A fence [around it|along one side] costs ${a}.",
                "The [owner|gardener] spends {a} hours there each week.",
                "{friend} [visits|sweeps] the {items} {a} times a month.",
            ),
            "ask": (
                "How many square meters of the {items} are still [unused|empty|free]?",
                "What area, in square meters, of the {items} is left [unused|open]?",
                "[At the end|After all this], how many square meters of the {items} remain [free|unused]?",
                "How much of the {items}, in square meters, is [still unused|left free]?",
            ),
        },
    ),
    _family(
        "comparison",
        0,
        None,
        {
            "items": (
                "books",
                "shells",
                "stamps",
                "coins",
                "pebbles",
                "badges",
                "comics",
                "pine cones",
                "feathers",
                "postcards",
                "magnets",
                "keychains",
            )
        },
        ("items",),
        {
            "set": ("{name} [has|owns|keeps|has collected] {a} {items}.",),
            "setmul": ("{name} has {a} [boxes|albums|tins] holding {b} {items} each.",),
            "add": ("{new} has {a} more {items} than {name}.", "{new} [owns|keeps] {a} {items} more than {name} does."),
            "sub": (
                "{new} has {a} fewer {items} than {name}.",
                "{new} [owns|keeps] {a} {items} fewer than {name} does.",
            ),
            "mul": (
                "{new} has {times} as many {items} as {name}.",
                "{new}'s collection of {items} is {times} the size of {name}'s.",
            ),
            "fracof": ("{new} has {frac} as many {items} as {name}.",),
            "muladd": ("{new} has {b} more than {times} as many {items} as {name}.",),
            "mulsub": ("{new} has {b} fewer than {times} as many {items} as {name}.",),
            "pcton": ("{new} has {a}% more {items} than {name}.",),
            "pctoff": ("{new} has {a}% fewer {items} than {name}.",),
            "note": (
                "{friend} is {a} years old.",
                "Their club meets {a} times a year.",
                "{friend} lives {a} blocks from {name}.",
            ),
            "ask": (
                "How many {items} does {name} have?",
                "How many {items} [does {name} own|are in {name}'s collection]?",
                "What is the number of {items} that {name} has?",
            ),
        },
    ),
]
FAMILIES: Mapping[str, Family] = MappingProxyType({f.kind: f for f in _FAMILIES})
KINDS: tuple[str, ...] = tuple(FAMILIES)
_SIGNED = ("savings", "game")  # families that take any integer: where the others hand over
