"""MathQuiz word problems for simulated players: write one, read one back, rate its difficulty.

A problem is a short story about one running quantity (money in a wallet, a temperature, the
stock of a warehouse...) or, in ``comparison``, a chain of people each compared with the one
before. The first sentence sets the quantity, each following sentence either changes it by one
operation or is an irrelevant fact, and the last sentence asks for its final value.

Every family is a table of sentence templates. A template is plain text with ``{slot}`` fields
(names, pronouns, numbers, nouns) and ``[one|another]`` alternatives that vary the wording; the
same string is rendered by :func:`generate_question` and compiled into the regular expression
with which :func:`solve` reads the sentence, so the writer and the reader cannot drift apart.
The generator works backwards from the target (choosing each operation's numbers so that every
intermediate step is an exact integer) and picks, among a few candidate plans, the one whose
measured difficulty is closest to the requested one.
"""

from __future__ import annotations

import math
import re
from bisect import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from types import MappingProxyType

import numpy as np

_FEMALE = ("Maya Lena Priya Sofia Amara Chloe Ingrid Yuki Fatima Rosa Hannah Nadia Elif Keiko Zara "
           "Greta Leila Marta Aisha Carmen Olga Tessa Nina Ada").split()
_MALE = ("Omar Jonas Ravi Tomas Kwame Felix Mateo Hugo Arjun Liam Diego Kenji Emil Yusuf Pablo "
         "Anton Samir Theo Milo Bruno Ivan Raul Dev Oscar").split()
_NAMES: Mapping[str, str] = MappingProxyType({**{n: "f" for n in _FEMALE}, **{n: "m" for n in _MALE}})
_NAME_LIST = tuple(_NAMES)
_PRONOUNS = {"f": {"He": "She", "he": "she", "His": "Her", "his": "her", "him": "her", "himself": "herself"},
             "m": {"He": "He", "he": "he", "His": "His", "his": "his", "him": "him", "himself": "himself"}}
_FRACS = {(1, 2): "half", (1, 3): "a third", (2, 3): "two thirds", (1, 4): "a quarter",
          (3, 4): "three quarters", (1, 5): "a fifth", (2, 5): "two fifths", (3, 5): "three fifths",
          (4, 5): "four fifths", (1, 6): "a sixth", (5, 6): "five sixths", (1, 8): "an eighth",
          (3, 8): "three eighths", (1, 10): "a tenth", (3, 10): "three tenths"}
_FRAC_OF = {text: pq for pq, text in _FRACS.items()}
_TIMES = {2: "twice", 3: "three times", 4: "four times", 5: "five times", 6: "six times",
          7: "seven times", 8: "eight times", 9: "nine times", 10: "ten times"}
_TIMES_OF = {text: k for k, text in _TIMES.items()}
_PCT_OFF = (5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 60, 75, 80, 90)
_PCT_ON = (5, 10, 15, 20, 25, 40, 50, 60, 75, 100, 150, 200)
_RATE_STEPS = (2, 3, 4, 5, 6, 10, 12, 15, 20, 30)

_NUM = r"\d{1,3}(?:,\d{3}){1,5}|\d{1,15}"  # bounded: int() of huge digit strings raises
_GLOBAL_SLOTS = {
    **{s: _NUM for s in "abc"},
    **{s: "|".join(sorted(_NAMES, key=len, reverse=True)) for s in ("name", "new", "friend")},
    **{s: f"{_PRONOUNS['f'][s]}|{_PRONOUNS['m'][s]}" for s in _PRONOUNS["m"]},
    "times": "|".join(_TIMES.values()) + rf"|(?:{_NUM}) times",
    "frac": "|".join(sorted(_FRAC_OF, key=len, reverse=True)),
    "Frac": "|".join(sorted((t[0].upper() + t[1:] for t in _FRAC_OF), key=len, reverse=True)),
}

# Difficulty cost of each operation (openers first): add/subtract < multiply < exact division <
# two-step products < fractions, percentages and unit rates.
WEIGHTS: Mapping[str, float] = MappingProxyType({
    "set": 0.0, "setneg": 0.5, "setmul": 1.0, "add": 1.0, "sub": 1.0, "mul": 1.6, "addsq": 1.8,
    "subsq": 1.8, "addmul": 2.0, "submul": 2.0, "div": 2.2, "share": 2.5, "muladd": 2.6,
    "mulsub": 2.6, "fracof": 2.6, "frac": 2.8, "pcton": 3.0, "pctoff": 3.0, "rateadd": 3.0,
    "ratesub": 3.0, "scale": 3.0})
_OPENERS = ("set", "setneg", "setmul")
_NOTE_COST, _DIGIT_COST, _COST_FLOOR, _COST_SPAN = 0.8, 0.3, 1.0, 19.0
_MAX_TEXT = 6000


def _apply(op: str, x: int, v: Mapping[str, int]) -> int | None:
    """The value after one operation on ``x``, or None when a division does not come out exact."""
    a, b, c, p, q = (v.get(k, 0) for k in "abcpq")

    def exact(n: int, d: int) -> int | None:
        return n // d if d > 0 and n % d == 0 else None

    match op:
        case "set" | "setneg" | "setmul":
            return {"set": a, "setneg": -a, "setmul": a * b}[op]
        case "add" | "sub":
            return x + a if op == "add" else x - a
        case "addmul" | "submul":
            return x + a * b if op == "addmul" else x - a * b
        case "addsq" | "subsq":
            return x + a * a if op == "addsq" else x - a * a
        case "mul" | "muladd" | "mulsub":
            return x * a + {"mul": 0, "muladd": b, "mulsub": -b}[op]
        case "div" | "share":
            return exact(x, a + (op == "share"))
        case "fracof":
            return exact(x * p, q)
        case "scale":
            return None if (unit := exact(x, a)) is None else unit * b
    part = {"frac": exact(x * p, q), "pcton": exact(x * a, 100), "pctoff": exact(x * a, 100),
            "rateadd": exact(c, b), "ratesub": exact(c, b)}[op]  # the amount taken off or added
    if part is None:
        return None
    return {"frac": x - part, "pcton": x + part, "pctoff": x - part, "rateadd": x + a * part,
            "ratesub": x - a * part}[op]


# ---------------------------------------------------------------- templates

_TOKEN = re.compile(r"\[([^\]]*)\]|\{(\w+)\}|([^\[{]+)")


def _tokens(src: str) -> tuple[tuple[str, object], ...]:
    """Split a template into ("lit", text), ("slot", name) and ("alt", (parts, ...)) pieces."""
    out: list[tuple[str, object]] = []
    for m in _TOKEN.finditer(src):
        if m.group(1) is not None:
            out.append(("alt", tuple(_tokens(alt) for alt in m.group(1).split("|"))))
        elif m.group(2) is not None:
            out.append(("slot", m.group(2)))
        else:
            out.append(("lit", m.group(3)))
    return tuple(out)


@dataclass(frozen=True)
class _Template:
    """One sentence form: the operation it denotes, how to write it and how to read it."""

    op: str
    parts: tuple[tuple[str, object], ...]
    regex: re.Pattern[str]
    groups: tuple[str, ...]  # the slot behind each capturing group, in order

    @classmethod
    def compile(cls, op: str, src: str, slots: Mapping[str, str]) -> _Template:
        parts, groups = _tokens(src), []

        def pattern(ps: tuple[tuple[str, object], ...]) -> str:
            out = []
            for kind, val in ps:
                if kind == "lit":
                    out.append(re.escape(val))
                elif kind == "slot":
                    groups.append(val)
                    out.append(f"({slots[val]})")
                else:
                    out.append("(?:" + "|".join(pattern(alt) for alt in val) + ")")
            return "".join(out)

        regex = re.compile(pattern(parts))
        return cls(op, parts, regex, tuple(groups))

    def render(self, ctx: Mapping[str, str], rng: np.random.Generator) -> str:
        def walk(ps: tuple[tuple[str, object], ...]) -> str:
            out = []
            for kind, val in ps:
                if kind == "lit":
                    out.append(val)
                elif kind == "slot":
                    out.append(ctx[val])
                else:
                    out.append(walk(_pick(val, rng)))
            return "".join(out)

        return walk(self.parts)

    def read(self, sentence: str) -> dict[str, str] | None:
        """The text of each slot, or None when the sentence is not of this form."""
        m = self.regex.fullmatch(sentence)
        if m is None:
            return None
        got: dict[str, str] = {}
        for i, slot in enumerate(self.groups, 1):
            text = m.group(i)
            if text is not None and got.setdefault(slot, text) != text:
                return None
        return got


@dataclass(frozen=True)
class Family:
    """A kind of problem: its vocabulary, the values it allows and its sentence templates."""

    kind: str
    lo: int | None  # smallest value the quantity may take (None: unbounded)
    hi: int | None
    words: Mapping[str, tuple[str, ...]]  # word slots; those in ``fixed`` stay put in a question
    fixed: tuple[str, ...]
    templates: Mapping[str, tuple[_Template, ...]]  # by operation, plus "note" and "ask"
    chained: bool  # every step introduces a new person compared with the one before
    steps: tuple[str, ...]  # the operations its step sentences denote

    def holds(self, value: int) -> bool:
        return (self.lo is None or value >= self.lo) and (self.hi is None or value <= self.hi)


def _family(kind: str, lo: int | None, hi: int | None, words: dict[str, tuple[str, ...]],
            fixed: tuple[str, ...], templates: dict[str, tuple[str, ...]]) -> Family:
    slots = {**_GLOBAL_SLOTS,
             **{w: "|".join(re.escape(x) for x in sorted(ws, key=len, reverse=True)) for w, ws in words.items()}}
    compiled = {op: tuple(_Template.compile(op, src, slots) for src in srcs) for op, srcs in templates.items()}
    chained = any("new" in t.groups for ts in compiled.values() for t in ts)
    steps = tuple(op for op in compiled if op in WEIGHTS and op not in _OPENERS)
    return Family(kind, lo, hi, MappingProxyType(words), fixed, MappingProxyType(compiled), chained, steps)


_FAMILIES = [
    _family("shopping", 0, None, {
        "place": ("market", "mall", "bookshop", "flea market", "bakery", "hardware store", "corner shop",
                  "toy shop", "garden centre", "night market"),
        "thing": ("a scarf", "a notebook", "a lamp", "some bread", "a potted plant", "a kite", "a phone case",
                  "a jigsaw puzzle", "a teapot", "a belt", "a city map", "a sun hat", "a board game"),
        "goods": ("mugs", "candles", "postcards", "pens", "pairs of socks", "apples", "keyrings", "batteries"),
        "relative": ("aunt", "uncle", "grandmother", "grandfather", "neighbour", "cousin", "godmother")}, (), {
        "set": ("{name} [goes|heads|walks] to the {place} with ${a} in {his} [wallet|pocket|purse].",
                "{name} has ${a} to spend at the {place}.",
                "[On Saturday|One morning|After school|At the weekend], {name} takes ${a} to the {place}."),
        "setmul": ("{name} [brings|takes] {a} gift vouchers worth ${b} each to the {place}.",),
        "sub": ("{He} [spends|pays] ${a} on {thing}.",
                "[Then|Next|After that], {he} [buys|picks up] {thing} for ${a}.",
                "{He} [treats {himself} to|splurges on] {thing} that costs ${a}."),
        "add": ("{He} finds ${a} [in an old coat|under a bench|at the bottom of {his} bag].",
                "{His} {relative} [gives|hands] {him} ${a}.",
                "{He} [sells|returns] {thing} and [gets|receives] ${a} [back|for it]."),
        "submul": ("{He} [buys|orders] {a} {goods} at ${b} each.",
                   "{He} [picks up|chooses] {a} {goods} that cost ${b} apiece."),
        "div": ("{He} [splits|divides] {his} money equally into {a} envelopes and keeps only one of them.",),
        "share": ("{He} [shares|splits] {his} money equally [between|among] {himself} and {a} [friends|cousins].",),
        "frac": ("{He} spends {frac} of {his} money on {thing}.",
                 "[Then|Later] {he} [uses|gives away] {frac} of what {he} has left."),
        "pctoff": ("{He} spends {a}% of {his} remaining money on {thing}.",
                   "{He} [gives|donates] {a}% of the money {he} still has to a [charity|street musician]."),
        "note": ("The {place} is {a} [minutes|blocks] from {his} home.",
                 "{friend} [spends|pays] ${a} there as well.",
                 "The bus fare would be ${a}, but {name} [walks|cycles]."),
        "ask": ("How many dollars does {name} have [left|now|at the end]?",
                "How much money, in dollars, does {name} have left?",
                "How much money, in dollars, is left in {name}'s [wallet|pocket|purse]?",
                "In dollars, how much [does {name} still have|is left for {name}]?",
                "What amount, in dollars, does {name} [go|walk] home with?")}),
    _family("savings", None, None, {
        "month": ("January", "March", "May", "July", "September", "November"),
        "relative": ("aunt", "uncle", "grandmother", "grandfather", "godfather", "older sister"),
        "purchase": ("a new phone", "a dentist visit", "car repairs", "a laptop", "concert tickets", "a winter coat")},
        (), {
        "set": ("{name} opens a savings account with ${a}.",
                "[At the start of {month}|On the first of {month}], {name}'s bank account holds ${a}.",
                "{name} has ${a} in {his} bank account.",
                "{name}'s [savings|current] account starts the year at ${a}."),
        "setneg": ("{name}'s bank account is overdrawn by ${a}.",
                   "[At the start of {month}|On the first of {month}], {name} owes {his} bank ${a}."),
        "setmul": ("{name} opens an account with {a} [cheques|gift cards] of ${b} each.",),
        "add": ("{He} [deposits|pays in] ${a}.",
                "A [tax refund|birthday gift|work bonus] of ${a} [lands in|is paid into] the account.",
                "{His} {relative} [transfers|sends] ${a} to the account.",
                "{He} [sells an old guitar|tutors a neighbour|walks dogs] and [banks|pays in] the ${a} "
                "[it brings|{he} earns]."),
        "sub": ("{He} [withdraws|takes out] ${a}.",
                "A [rent payment|repair bill|phone bill] of ${a} is [paid from|taken out of] the account.",
                "{He} [pays for|covers] {purchase} with ${a} from the account."),
        "addmul": ("{He} deposits ${b} [every week|each week] for {a} weeks.",
                   "For {a} months {he} [pays in|saves] ${b} a month.",
                   "{His} [employer|weekend job] pays ${b} into the account on each of {a} [Fridays|paydays]."),
        "submul": ("A [gym|streaming|phone] plan takes ${b} a month from the account for {a} months.",
                   "{He} withdraws ${b} on each of {a} [days|trips].",
                   "Each of {a} [invoices|bills] takes ${b} out of the account."),
        "pcton": ("The bank adds {a}% interest to the balance.",
                  "After a year, the balance grows by {a}% in interest.",
                  "Interest of {a}% is [credited|added] at the end of the year."),
        "pctoff": ("{He} spends {a}% of the balance on {purchase}.",
                   "{He} moves {a}% of the balance into a [pension fund|second account]."),
        "mul": ("A lucky [investment|prize draw] makes the balance {times} as large.",
                "A [share sale|good investment] leaves the balance at {times} what it was."),
        "rateadd": ("{He} saves ${a} every {b} days for {c} days and pays it all into the account.",
                    "Over {c} days, {he} [banks|deposits] ${a} every {b} days."),
        "ratesub": ("A [loan|subscription] takes ${a} every {b} days for {c} days.",
                    "For {c} days, a standing order [removes|withdraws] ${a} every {b} days."),
        "note": ("{friend} keeps ${a} in a jar at home.",
                 "The bank branch is {a} [minutes|blocks] from {name}'s house.",
                 "{name}'s [sister|cousin] saves ${a} a month at a different bank.",
                 "{friend}'s account pays {a}% interest, but {friend} banks elsewhere."),
        "ask": ("What is the balance of {name}'s account now, in dollars?",
                "In dollars, what is the account balance [now|at the end]?",
                "What does {name}'s bank balance come to, in dollars?",
                "What balance, in dollars, does {name}'s account show [at the end|after all this]?")}),
    _family("temperature", -273, 5000, {
        "items": ("metal sample", "test chamber", "furnace", "steel bar", "lab oven", "probe", "reactor vessel",
                  "glass kiln", "cold store", "brine tank", "copper pipe", "climate cabinet", "sand bath",
                  "vacuum flask", "smelting pot"),
        "time": ("dawn", "midnight", "noon", "sunrise", "nine o'clock", "the start of the shift"),
        "heater": ("heater", "heat lamp", "burner", "hot plate", "boiler", "heating coil"),
        "cooler": ("fan", "cooling unit", "cold draught", "chiller", "ice pack", "water jacket"),
        "tick": ("minutes", "seconds")}, ("items",), {  # a word used twice in a sentence is read the same twice
        "set": ("[At {time}|To begin with|When the test starts], the {items} is at {a} degrees.",
                "A thermometer in the {items} [reads|shows] {a} degrees.",
                "The {items} starts the [day|experiment] at {a} degrees.",
                "[A technician|A student|{friend}] records {a} degrees in the {items} [at {time}|first thing]."),
        "setneg": ("[At {time}|To begin with|When the test starts], the {items} is at {a} degrees below zero.",
                   "A thermometer in the {items} [reads|shows] minus {a} degrees.",
                   "[A technician|A student|{friend}] records {a} degrees below zero in the {items}."),
        "add": ("It [warms|heats] up by {a} degrees.",
                "[Over the next hour|By noon|After that], the temperature rises {a} degrees.",
                "The {heater} [pushes|lifts|brings] it up {a} degrees.",
                "The reading [climbs|goes up|jumps] by {a} degrees."),
        "sub": ("It cools [down|off] by {a} degrees.",
                "[Then|Later|Overnight], the temperature [falls|drops] {a} degrees.",
                "The {cooler} [takes|knocks] {a} degrees off it.",
                "The reading [slips|dips|sinks] by {a} degrees."),
        "addmul": ("It warms {b} degrees [an hour for {a} hours|a day for {a} days|a minute for {a} minutes].",
                   "For {a} hours the temperature climbs {b} degrees each hour.",
                   "On each of {a} days it gains {b} degrees.",
                   "The {heater} adds {b} degrees in each of the next {a} [hours|days|minutes]."),
        "submul": ("It cools {b} degrees [an hour for {a} hours|a day for {a} days|a minute for {a} minutes].",
                   "For {a} hours the temperature sinks {b} degrees each hour.",
                   "On each of {a} days it loses {b} degrees.",
                   "The {cooler} [removes|takes away] {b} degrees in each of the next {a} [hours|days|minutes]."),
        "rateadd": ("The {heater} raises it {a} degrees every {b} [minutes for {c} minutes|seconds for {c} seconds].",
                    "Over {c} {tick} it gains {a} degrees every {b} {tick}.",
                    "Every {b} [minutes for the next {c} minutes|hours for the next {c} hours], "
                    "the reading [rises|creeps up] {a} degrees."),
        "ratesub": ("The {cooler} lowers it {a} degrees every {b} [minutes for {c} minutes|seconds for {c} seconds].",
                    "Over {c} {tick} it loses {a} degrees every {b} {tick}.",
                    "Every {b} [minutes for the next {c} minutes|hours for the next {c} hours], "
                    "the reading [falls|drops back] {a} degrees."),
        "note": ("The room around it stays at {a} degrees.",
                 "The [reading|display] is logged every {a} minutes.",
                 "{friend} checks the {items} {a} times [a day|a shift].",
                 "The {heater} is {a} years old."),
        "ask": ("What temperature, in degrees, does the {items} reach [in the end|at the end]?",
                "What is the temperature of the {items} now, in degrees?",
                "[At the end|Finally], what does the thermometer in the {items} read, in degrees?",
                "What is the final temperature of the {items}, in degrees?")}),
    _family("game", None, None, {
        "game": ("quiz", "board game", "video game", "trivia night", "card game", "spelling contest",
                 "pinball match", "darts match")}, ("game",), {
        "set": ("{name} [starts|begins] a {game} with {a} points.",
                "In a {game}, {name} has {a} points [after the first round|at half time]."),
        "setneg": ("{name} [starts|begins] a {game} {a} points below zero.",
                   "After a bad first round of a {game}, {name}'s score is minus {a} points."),
        "setmul": ("In the opening stage of a {game}, {name} [wins|collects] {a} [tokens|cards] "
                   "worth {b} points each.",),
        "add": ("{He} [wins|earns|scores] {a} more points.",
                "A [lucky|clever|bold] move [earns|brings] {him} {a} points."),
        "sub": ("{He} loses {a} points [on a wrong answer|for a mistake|on a bad roll].",
                "A penalty [costs {him}|takes away] {a} points."),
        "addmul": ("{He} [answers|gets] {a} [questions|puzzles] right, [worth|at] {b} points each.",
                   "{He} [scores|lands] {a} [hits|shots] worth {b} points apiece."),
        "submul": ("{He} [misses|fails] {a} [questions|turns], [losing|at a cost of] {b} points each.",),
        "mul": ("A bonus [round|card] multiplies {his} score by {a}.",
                "After a golden round {his} score is {times} as big."),
        "pcton": ("A [streak|combo] bonus adds {a}% to {his} score.",
                  "{His} score [goes up|grows] by {a}% thanks to a bonus."),
        "pctoff": ("A penalty card [wipes out|removes] {a}% of {his} points.",),
        "frac": ("{He} [loses|gives up] {frac} of {his} points [in a trade|on a risky bet].",),
        "note": ("{friend} [finishes|ends] with {a} points.",
                 "The {game} [lasts|runs for] {a} minutes.",
                 "There are {a} players [in all|at the table]."),
        "ask": ("What is {name}'s score [at the end|when the {game} ends|now]?",
                "How many points does {name} [finish with|have at the end]?",
                "What score does {name} end the {game} with?")}),
    _family("inventory", 0, None, {
        "items": ("crates", "boxes of nails", "sacks of rice", "tyres", "cartons of juice", "rolls of fabric",
                  "bags of cement", "folding chairs", "bicycles", "desk lamps", "drums of oil", "reams of paper"),
        "site": ("warehouse", "depot", "storeroom", "stockroom", "supply shed", "distribution centre"),
        "town": ("Porto", "Lyon", "Tampere", "Gdansk", "Malaga", "Leeds", "Graz")}, ("items", "site"), {
        "set": ("A {site} [in {town}|on the edge of town|by the harbour] holds {a} {items}.",
                "[On Monday|At the start of the month|Before the sale], the {site} has {a} {items} in stock.",
                "There are {a} {items} in the {site}."),
        "setmul": ("The {site} has {a} shelves, each holding {b} {items}.",
                   "{a} pallets of {b} {items} each are stacked in the {site}."),
        "add": ("A [truck|van|supplier] delivers {a} more {items}.",
                "[Then|Later], {a} {items} [arrive|come in] from the factory."),
        "sub": ("{a} {items} are [sold|shipped out|sent to a shop].",
                "[A customer|A school|A hotel] [orders|buys] {a} {items}."),
        "addmul": ("A [truck|lorry|freight train] brings {a} pallets with {b} {items} on each.",
                   "{a} [vans|boats] each [drop off|unload] {b} {items}."),
        "submul": ("{a} [shops|customers|stores] each [order|take] {b} {items}.",
                   "The [staff|team] [loads|fills] {a} trucks with {b} {items} each."),
        "pctoff": ("{a}% of the {items} are [shipped|sold] [that week|in a sale].",
                   "A [recall|clearance sale] removes {a}% of the stock."),
        "frac": ("{Frac} of the {items} [turn out to be|are found] damaged and are thrown away.",
                 "[Staff find that|An inspector finds that] {frac} of the {items} are broken, and those are scrapped."),
        "rateadd": ("The factory sends {a} {items} every {b} days for {c} days.",),
        "ratesub": ("A [conveyor|packing line] ships out {a} {items} every {b} minutes for {c} minutes.",),
        "note": ("The {site} employs {a} [workers|people].",
                 "Each [truck|van] can carry up to {a} tonnes.",
                 "The {site} [opened|was built] {a} years ago."),
        "ask": ("How many {items} are [in the {site}|left in the {site}|in stock] now?",
                "How many {items} does the {site} hold [at the end|after all this]?",
                "[At the end|Finally], how many {items} are [left|in stock]?")}),
    _family("sharing", 0, None, {
        "items": ("marbles", "stickers", "cookies", "cherries", "seashells", "trading cards", "pencils",
                  "grapes", "buttons", "chestnuts", "balloons", "plums", "crayons", "acorns")}, ("items",), {
        "set": ("{name} [has|collects|gathers] {a} {items}.",
                "[At the fair|At the beach|After the party], {name} [ends up with|brings home] {a} {items}."),
        "setmul": ("{name} has {a} [bags|jars|boxes] with {b} {items} in each.",),
        "add": ("{friend} [gives|hands] {him} {a} more {items}.",
                "{He} [finds|wins|picks up] {a} more."),
        "sub": ("{He} [loses|misplaces|drops] {a} of them.",
                "{He} gives {a} of them to {friend}."),
        "addmul": ("{He} [buys|gets] {a} packs of {b} {items}.",),
        "submul": ("{He} gives {b} {items} to each of {his} {a} [cousins|classmates|neighbours].",
                   "{He} [hands|passes] out {b} to each of {a} friends."),
        "share": ("{He} [shares|splits] them equally [between|among] {himself} and {a} friends "
                  "and keeps {his} share.",),
        "div": ("{He} [packs|sorts] them equally into {a} [bags|boxes|jars] and keeps just one of them.",
                "{He} [divides|splits] them into {a} equal piles and keeps one pile."),
        "frac": ("{He} gives away {frac} of them.",
                 "{He} [trades|swaps] {frac} of {his} {items} for a [comic|yo-yo|kite]."),
        "note": ("{friend} has {a} {items} too.",
                 "{His} [box|jar|bag] could hold up to {a} of them.",
                 "{friend} is {a} years old."),
        "ask": ("How many {items} does {name} [have now|have left|end up with|keep]?",
                "[In the end|At the end], how many {items} does {name} have?")}),
    _family("recipes", 0, None, {
        "items": ("flour", "sugar", "butter", "oats", "cocoa", "grated cheese", "ground almonds", "rice",
                  "honey", "cream"),
        "dish": ("cookies", "muffins", "pancakes", "bread rolls", "scones", "dumplings", "waffles", "tarts")},
        ("items", "dish"), {
        "set": ("{name}'s recipe for {dish} [uses|calls for|needs] {a} grams of {items}.",
                "{name} [finds|picks] a recipe for {dish} that [uses|needs] {a} grams of {items}."),
        "setmul": ("{name}'s recipe for {dish} [uses|asks for] {a} [scoops|spoonfuls] of {items} at {b} grams each.",),
        "scale": ("The recipe makes {a} {dish}, but {he} [wants|needs] {b}.",
                  "{He} [scales|adjusts] the recipe from {a} {dish} to {b} {dish}."),
        "mul": ("{He} [decides|plans] to make {a} batches instead of one.",
                "{He} [multiplies|scales up] every amount by {a}."),
        "div": ("{He} [makes|bakes] a smaller batch, dividing every amount by {a}.",),
        "add": ("{He} adds {a} [extra grams|grams more] [for dusting|to be safe|for the topping].",),
        "sub": ("{He} [uses|puts in] {a} grams less because {his} [tin|bowl|tray] is small.",),
        "addmul": ("{He} also [adds|makes] {a} [toppings|glazes|fillings] that need {b} grams each.",
                   "Each of {a} [trays|tins] needs {b} more grams [for the base|for a crust]."),
        "pcton": ("{He} [adds|uses] {a}% more {items} than the recipe says.",),
        "pctoff": ("{He} [cuts|reduces] the {items} by {a}% to make it [lighter|healthier|less rich].",),
        "note": ("The [oven|stove] timer is set for {a} minutes.",
                 "{friend} [brings|offers] {a} grams of [jam|nuts] [too|as well].",
                 "{name}'s kitchen has {a} [jars|tins] on the shelf."),
        "ask": ("How many grams of {items} does {name} [need|use] [in the end|altogether|now]?",
                "[In the end|Altogether], how many grams of {items} does {name} need?")}),
    _family("travel", 0, None, {
        "dest": ("the lake", "the old mill", "a hill fort", "the coast", "a mountain hut", "the next village",
                 "a waterfall", "the lighthouse", "a ruined abbey", "the border"),
        "errand": ("fetch a lost glove", "look for a dropped map", "help a friend", "take a photo",
                   "pick up a forgotten bottle"),
        "boat": ("ferry", "canoe", "barge", "rowing boat"),
        "lift": ("friend", "farmer", "neighbour", "lorry driver")}, (), {
        "set": ("{name} [cycles|rides|hikes] {a} kilometers from home toward {dest}.",
                "[On Sunday|Early one morning|For a race], {name} sets off from home and covers {a} kilometers.",
                "{name} leaves {his} [house|flat|village] and [travels|goes] {a} kilometers "
                "[north|east|along the river]."),
        "setmul": ("{name} [drives|rides] away from home for {a} hours at {b} kilometers per hour.",),
        "add": ("[Then|After a break|Later] {he} [walks|jogs|cycles] another {a} kilometers [onward|ahead].",
                "{He} [keeps going|carries on|presses on] for {a} more kilometers.",
                "A {lift} gives {him} a lift {a} kilometers farther [away|along the road]."),
        "sub": ("{He} turns back {a} kilometers to {errand}.",
                "{He} [retreats|doubles back] {a} kilometers [toward home|the way {he} came]."),
        "addmul": ("{He} [rides|cycles|drives] on for {a} hours at {b} kilometers [an hour|per hour].",
                   "Next, {he} takes a [train|bus] onward for {a} hours at {b} kilometers per hour.",
                   "{He} [sails|floats] on in a {boat} for {a} hours, making {b} kilometers [each hour|an hour]."),
        "submul": ("{He} heads back toward home for {a} hours at {b} kilometers per hour.",
                   "For {a} hours {he} [drives|rides] homeward at {b} kilometers [an hour|per hour]."),
        "rateadd": ("{He} [runs|skates|paddles] on, {a} kilometers every {b} minutes for {c} minutes.",
                    "{He} [jogs|rows] onward for {c} minutes, covering {a} kilometers every {b} minutes."),
        "ratesub": ("{He} walks back toward home, {a} kilometers every {b} minutes for {c} minutes.",
                    "For {c} minutes {he} [trots|paddles] back toward home at {a} kilometers every {b} minutes."),
        "frac": ("{He} [retraces|walks back] {frac} of the distance [so far|covered so far].",
                 "Lost, {he} goes back over {frac} of the way toward home."),
        "pctoff": ("{He} heads back over {a}% of the distance from home.",
                   "{He} [backtracks|returns] {a}% of the way toward home."),
        "pcton": ("{He} pushes on and adds another {a}% to {his} distance from home.",
                  "By evening {he} has [stretched|increased] {his} distance from home by {a}%."),
        "note": ("{His} [bike|backpack] weighs {a} kilograms.",
                 "{friend} lives {a} kilometers [away|from the station].",
                 "The [route|trail] has {a} signposts.",
                 "{He} [drinks|carries] {a} [cups of tea|bottles of water] on the way."),
        "ask": ("How many kilometers from home is {name} [now|at the end]?",
                "How far from home, in kilometers, does {name} end up?",
                "[At the end|Finally], how many kilometers "
                "[separate {name} from home|is {name} from {his} starting point]?",
                "What is {name}'s distance from home at the end, in kilometers?")}),
    _family("geometry", 0, None, {
        "items": ("garden", "yard", "field", "courtyard", "playground", "parking lot", "rooftop", "sports ground",
                  "meadow", "schoolyard", "cherry orchard", "paddock", "market square"),
        "owner": ("A farmer", "The council", "A school", "A hotel", "A museum")}, ("items",), {
        "setmul": ("A rectangular {items} is {b} meters long and {a} meters wide.",
                   "The {items} is a rectangle of {b} meters by {a} meters.",
                   "{owner} owns a rectangular {items} measuring {b} by {a} meters."),
        "set": ("A {items} [covers|has an area of] {a} square meters.",
                "{owner} owns a {items} of {a} square meters.",
                "The {items} has a total area of {a} square meters."),
        "subsq": ("A square [pond|shed|fountain|sandbox] with sides of {a} meters is built on it.",
                  "[Then|Next], a square [patio|flower bed] {a} meters on each side is laid in the {items}.",
                  "Workers [put up|build] a square [hut|kiosk|gazebo] {a} meters on a side there."),
        "submul": ("A [path|gravel strip] {b} meters long and {a} meters wide is laid across it.",
                   "A rectangular [pool|greenhouse|barn] of {b} meters by {a} meters is [built|put up] there.",
                   "[Tiles|Paving stones|Solar panels] now cover a {b} by {a} meter patch of it."),
        "addmul": ("The {items} is [extended|enlarged] by a strip of {b} by {a} meters.",
                   "A neighbouring [strip|plot] of {b} by {a} meters is [bought|added] to the {items}."),
        "addsq": ("A square [lot|corner plot] {a} meters on each side is [added|joined] to it.",
                  "{owner} buys a square patch {a} meters on a side next to it."),
        "div": ("The [unused|free] ground is split into {a} equal parts, and all but one part is sold.",
                "{owner} keeps one of {a} equal shares of the unused ground and rents out the rest."),
        "pctoff": ("{a}% of the [remaining|unused] ground is [covered with gravel|planted with trees|paved].",
                   "[Builders|Gardeners] take over {a}% of the free ground."),
        "frac": ("{Frac} of the unused ground [is turned into a vegetable bed|gets a wooden deck].",
                 "[Weeds|Wild flowers] soon cover {frac} of the free ground."),
        "note": ("The {items} [lies|is] {a} meters from the [road|river|school].",
                 "A fence [around it|along one side] costs ${a}.",
                 "The [owner|gardener] spends {a} hours there each week.",
                 "{friend} [visits|sweeps] the {items} {a} times a month."),
        "ask": ("How many square meters of the {items} are still [unused|empty|free]?",
                "What area, in square meters, of the {items} is left [unused|open]?",
                "[At the end|After all this], how many square meters of the {items} remain [free|unused]?",
                "How much of the {items}, in square meters, is [still unused|left free]?")}),
    _family("comparison", 0, None, {
        "items": ("books", "shells", "stamps", "coins", "pebbles", "badges", "comics", "pine cones", "feathers",
                  "postcards", "magnets", "keychains")}, ("items",), {
        "set": ("{name} [has|owns|keeps|has collected] {a} {items}.",),
        "setmul": ("{name} has {a} [boxes|albums|tins] holding {b} {items} each.",),
        "add": ("{new} has {a} more {items} than {name}.",
                "{new} [owns|keeps] {a} {items} more than {name} does."),
        "sub": ("{new} has {a} fewer {items} than {name}.",
                "{new} [owns|keeps] {a} {items} fewer than {name} does."),
        "mul": ("{new} has {times} as many {items} as {name}.",
                "{new}'s collection of {items} is {times} the size of {name}'s."),
        "fracof": ("{new} has {frac} as many {items} as {name}.",),
        "muladd": ("{new} has {b} more than {times} as many {items} as {name}.",),
        "mulsub": ("{new} has {b} fewer than {times} as many {items} as {name}.",),
        "pcton": ("{new} has {a}% more {items} than {name}.",),
        "pctoff": ("{new} has {a}% fewer {items} than {name}.",),
        "note": ("{friend} is {a} years old.",
                 "Their club meets {a} times a year.",
                 "{friend} lives {a} blocks from {name}."),
        "ask": ("How many {items} does {name} have?",
                "How many {items} [does {name} own|are in {name}'s collection]?",
                "What is the number of {items} that {name} has?")}),
]
FAMILIES: Mapping[str, Family] = MappingProxyType({f.kind: f for f in _FAMILIES})
KINDS: tuple[str, ...] = tuple(FAMILIES)
_SIGNED = ("savings", "game")  # families that take any integer: where the others hand over


# ---------------------------------------------------------------- reading

_SENTENCE_BREAK = re.compile(r"(?<=[.?!])\s+")
_Event = tuple[str, Mapping[str, int], str | None, str]  # operation, its numbers, source, destination


@dataclass(frozen=True)
class _Problem:
    """What a question says: its family, its operations in order, the irrelevant facts, the ask."""

    kind: str
    events: tuple[_Event, ...]
    notes: int
    ask: str
    answer: int


def _numbers(got: Mapping[str, str]) -> dict[str, int]:
    """The numeric value of each number-like slot (multipliers go to "a", fractions to "p"/"q")."""
    vals: dict[str, int] = {}
    for slot, text in got.items():
        if slot in ("a", "b", "c"):
            vals[slot] = int(text.replace(",", ""))
        elif slot == "times":
            vals["a"] = _TIMES_OF.get(text) or int(text.split()[0].replace(",", ""))
        elif slot in ("frac", "Frac"):
            vals["p"], vals["q"] = _FRAC_OF[text.lower()]
    return vals


def _run(fam: Family, events: tuple[_Event, ...], ask: str) -> int | None:
    """Carry out the operations on the named quantities; None if a step is inexact or impossible."""
    values: dict[str, int] = {}
    for op, vals, src, dst in events:
        if src is not None and src not in values:
            return None
        y = _apply(op, values[src] if src is not None else 0, vals)
        if y is None or not fam.holds(y):
            return None
        values[dst] = y
    return values.get(ask)


def _bind(fam: Family, op: str, got: Mapping[str, str], known: set[str], current: str,
          fixed: Mapping[str, str]) -> tuple[str | None, str] | None:
    """Whose quantity a sentence reads and writes, if it is consistent with the story so far."""
    if any(fixed.get(w, got[w]) != got[w] for w in fam.fixed if w in got):
        return None
    if got.get("friend") in known or got.get("friend", "") == got.get("new"):
        return None
    if op in _OPENERS:
        return None, got.get("name", "")
    src = got.get("name", current)
    if src not in known:
        return None
    pronouns = [s for s in _PRONOUNS["m"] if s in got]
    if pronouns and (src not in _NAMES or any(got[s] != _PRONOUNS[_NAMES[src]][s] for s in pronouns)):
        return None
    dst = got.get("new", src)
    return None if "new" in got and dst in known else (src, dst)


def _read_as(fam: Family, sentences: list[str]) -> _Problem | None:
    """Read the sentences as a problem of one family: opener, steps and facts, then the question."""
    known: set[str] = set()
    fixed: dict[str, str] = {}
    events: list[_Event] = []
    current, notes, ask = "", 0, None
    last = len(sentences) - 1
    for i, sentence in enumerate(sentences):
        roles = _OPENERS if i == 0 else ("ask",) if i == last else (*fam.steps, "note")
        for op in roles:
            bound = None
            for tpl in fam.templates.get(op, ()):
                got = tpl.read(sentence)
                if got is not None and (bound := _bind(fam, op, got, known, current, fixed)) is not None:
                    break
            if bound is not None:
                break
        else:
            return None
        fixed.update((w, got[w]) for w in fam.fixed if w in got)
        if op == "note":
            notes += 1
        elif op == "ask":
            ask = bound[0]
        else:
            events.append((op, _numbers(got), *bound))
            known.add(bound[1])
            current = bound[1]
    answer = _run(fam, tuple(events), ask) if ask is not None else None
    return None if answer is None else _Problem(fam.kind, tuple(events), notes, ask, answer)


def _parse(text: str) -> _Problem | None:
    if not isinstance(text, str) or len(text) > _MAX_TEXT:
        return None
    sentences = _SENTENCE_BREAK.split(text.strip())
    if len(sentences) < 2:
        return None
    for fam in _FAMILIES:
        if any(t.read(sentences[0]) is not None for op in _OPENERS for t in fam.templates.get(op, ())):
            if (problem := _read_as(fam, sentences)) is not None:
                return problem
    return None


def solve(text: str) -> int | None:
    """Read a question written by :func:`generate_question` and return its answer.

    None for any text not in the generator's forms (a paraphrase, a question with a sentence
    missing, a story whose numbers do not divide exactly...). Never raises.
    """
    problem = _parse(text)
    return None if problem is None else problem.answer


def kind_of(text: str) -> str | None:
    """The family of a question written by :func:`generate_question` (None otherwise)."""
    problem = _parse(text)
    return None if problem is None else problem.kind


# ---------------------------------------------------------------- difficulty

_ANY_NUMBER = re.compile(r"\d[\d,]*")
_HARD_WORDS = re.compile(r"%|\b(?:percent|half|halves|thirds?|quarters?|fifths?|sixths?|eighths?|tenths?|per|"
                         r"every|each|apiece|times|twice|double[sd]?|triple[sd]?|equally|ratio|average|rate)\b",
                         re.IGNORECASE)
_PLAIN_WORDS = re.compile(r"\b(?:more|fewer|less|left|gives?|spends?|buys?|loses?|adds?|remaining|total|"
                          r"altogether|sum|difference|plus|minus)\b", re.IGNORECASE)


def _cost(events: list[tuple[str, Mapping[str, int]]] | tuple[_Event, ...], notes: int) -> float:
    """Work to solve a problem: operation weights, long numbers and irrelevant facts."""
    cost = _NOTE_COST * notes
    for op, vals, *_ in events:
        digits = sum(max(0, len(str(vals[k])) - 2) for k in ("a", "b", "c") if k in vals)
        cost += WEIGHTS[op] + _DIGIT_COST * digits
    return cost


def _level(cost: float) -> float:
    return min(1.0, max(0.0, (cost - _COST_FLOOR) / _COST_SPAN))


def question_difficulty(text: str) -> float:
    """How hard a question is to solve, in [0, 1], from its text alone.

    For a question :func:`solve` can read, the cost of its operations (add/subtract < multiply <
    exact division < fractions, percentages, unit rates), its long numbers and its irrelevant
    facts; for any other text a rough estimate of the same from its numbers and operation words.
    """
    problem = _parse(text)
    if problem is not None:
        return _level(_cost(problem.events, problem.notes))
    text = text[:_MAX_TEXT] if isinstance(text, str) else ""
    nums = [n.replace(",", "") for n in _ANY_NUMBER.findall(text)][:200]
    rough = (1.2 * max(0, len(nums) - 2) + 1.0 * len(_HARD_WORDS.findall(text))
             + 0.3 * len(_PLAIN_WORDS.findall(text)) + _DIGIT_COST * sum(max(0, len(n) - 2) for n in nums))
    return _level(_COST_FLOOR + rough)


# ---------------------------------------------------------------- writing

def _pick[T](seq: Sequence[T], rng: np.random.Generator) -> T:
    return seq[int(rng.random() * len(seq))]  # rng.random() is several times cheaper than rng.integers()


def _back(op: str, y: int, rng: np.random.Generator, scale: int) -> tuple[int, dict[str, int]] | None:
    """A value before ``op`` and the operation's numbers, such that the operation gives ``y``."""
    def r(lo: int, hi: int) -> int:
        return lo + int(rng.random() * (max(lo, hi) - lo + 1))

    if op in ("add", "sub"):
        a = r(2, scale)
        return (y - a if op == "add" else y + a), {"a": a}
    if op in ("addmul", "submul"):
        a, b = r(2, 9 if scale < 60 else 12), r(2, max(3, scale // 2))
        return (y - a * b if op == "addmul" else y + a * b), {"a": a, "b": b}
    if op in ("addsq", "subsq"):
        a = r(2, min(30, 4 + scale // 10))
        return (y - a * a if op == "addsq" else y + a * a), {"a": a}
    if op in ("rateadd", "ratesub"):
        b, m, a = _pick(_RATE_STEPS, rng), r(2, 6), r(2, max(2, scale // 3))
        return (y - a * m if op == "rateadd" else y + a * m), {"a": a, "b": b, "c": b * m}
    if op in ("muladd", "mulsub"):
        k, b = r(2, 6), r(2, scale)
        b += (y - b) % k if op == "muladd" else -(y + b) % k
        return ((y - b) // k if op == "muladd" else (y + b) // k), {"a": k, "b": b}
    if y <= 0:  # the remaining operations scale a positive quantity
        return None
    if op in ("div", "share"):
        a = r(2, 9 if op == "div" else 7)
        return y * (a + (op == "share")), {"a": a}
    choices = {
        "mul": [k for k in range(2, 11) if y % k == 0],
        "scale": [b for b in range(2, 13) if y % b == 0],
        "frac": [pq for pq in _FRACS if y * pq[1] % (pq[1] - pq[0]) == 0],
        "fracof": [pq for pq in _FRACS if y * pq[1] % pq[0] == 0],
        "pctoff": [p for p in _PCT_OFF if 100 * y % (100 - p) == 0],
        "pcton": [p for p in _PCT_ON if 100 * y % (100 + p) == 0]}[op]
    if not choices:
        return None
    c = _pick(choices, rng)
    if op == "mul":
        return y // c, {"a": c}
    if op == "scale":
        a = _pick([a for a in range(2, 13) if a != c], rng)
        return y // c * a, {"a": a, "b": c}
    if op in ("frac", "fracof"):
        p, q = c
        return y * q // (q - p if op == "frac" else p), {"p": p, "q": q}
    return 100 * y // (100 - c if op == "pctoff" else 100 + c), {"a": c}


def _plan(fam: Family, d: float, rng: np.random.Generator) -> tuple[list[str], int]:
    """Operations (forward order) and a number of irrelevant facts whose cost is about ``d``."""
    notes = int(min(2.0, max(0.0, np.floor(3 * d - 1 + rng.random()))))
    budget = _COST_FLOOR + _COST_SPAN * d - _NOTE_COST * notes
    ops = fam.steps
    pref = list(accumulate(math.exp(-(((WEIGHTS[o] - (1 + 1.9 * d)) / 0.8) ** 2)) for o in ops))
    plan: list[str] = []
    for u in rng.random(8):
        plan.append(ops[bisect(pref, u * pref[-1])])
        budget -= WEIGHTS[plan[-1]]
        if budget <= 0.5:
            break
    return plan, notes


def _build(fam: Family, d: float, target: int,
           rng: np.random.Generator) -> tuple[list[tuple[str, dict[str, int]]], int] | None:
    """One candidate problem, worked backwards from the target: (opener + steps, notes)."""
    plan, notes = _plan(fam, d, rng)
    scale, cap, hidden = int(8 + 300 * d * d), int(max(2 * abs(target), 300) * (1 + 4 * d)), abs(target)

    def fits(back: tuple[int, dict[str, int]] | None) -> bool:
        return (back is not None and 2 <= abs(back[0]) <= cap and fam.holds(back[0])
                and hidden not in back[1].values())

    y, steps = target, []
    for planned in reversed(plan):
        # the planned operation, else the one closest in weight that works from here
        jitter = rng.random(len(fam.steps))
        fallbacks = sorted((abs(WEIGHTS[o] - WEIGHTS[planned]) + 0.5 * j, o) for o, j in zip(fam.steps, jitter))
        for op in (planned, planned, planned, *(o for _, o in fallbacks)):
            if fits(back := _back(op, y, rng, scale)):
                break
        else:
            return None
        y = back[0]
        steps.append((op, back[1]))
    if y < 0:
        opener = ("setneg", {"a": -y}) if "setneg" in fam.templates and -y != hidden else None
    else:
        pairs = [(a, y // a) for a in range(2, 13) if y % a == 0 and y // a >= 2 and hidden not in (a, y // a)]
        use_mul = "setmul" in fam.templates and pairs and ("set" not in fam.templates or rng.random() < 0.2 + 0.5 * d)
        if use_mul:
            opener = ("setmul", dict(zip("ab", _pick(pairs, rng))))
        else:
            opener = None if y == hidden else ("set", {"a": y})
    return None if opener is None else ([opener, *reversed(steps)], notes)


def _render(fam: Family, events: list[tuple[str, dict[str, int]]], notes: int, target: int,
            rng: np.random.Generator) -> str:
    order = rng.permutation(len(_NAME_LIST))
    cast = [_NAME_LIST[i] for i in order]
    people, spare = cast[:len(events) if fam.chained else 1], cast[len(events):]
    gender = _NAMES[people[0]]
    fixed = {w: _pick(fam.words[w], rng) for w in fam.fixed}

    def sentence(op: str, vals: Mapping[str, int], name: str, new: str | None = None) -> str:
        ctx = {**_PRONOUNS[gender], "name": name, "friend": _pick(spare, rng),
               **{w: fixed.get(w) or _pick(ws, rng) for w, ws in fam.words.items()},
               **{k: f"{v:,}" for k, v in vals.items() if k in ("a", "b", "c")}}
        if new is not None:
            ctx["new"] = new
        if "a" in vals:
            ctx["times"] = _TIMES.get(vals["a"]) or f"{vals['a']:,} times"
        if "p" in vals:
            ctx["frac"] = _FRACS[vals["p"], vals["q"]]
            ctx["Frac"] = ctx["frac"][0].upper() + ctx["frac"][1:]
        return _pick(fam.templates[op], rng).render(ctx, rng)

    lines = [sentence(op, vals, *((people[i - 1], people[i]) if fam.chained and i else (people[0],)))
             for i, (op, vals) in enumerate(events)]
    for _ in range(notes):
        a = abs(target)
        while a == abs(target):
            a = int(rng.integers(2, 60))
        lines.insert(int(rng.integers(1, len(lines) + 1)), sentence("note", {"a": a}, people[0]))
    lines.append(sentence("ask", {}, people[-1]))
    return " ".join(lines)


def generate_question(kind: str, difficulty: float, target: int, rng: np.random.Generator) -> str:
    """An English word problem of family ``kind`` whose answer is exactly ``target``.

    ``difficulty`` in [0, 1] (clipped) sets the number of steps (1 at 0, up to 8 at 1), how hard
    they are, how long the numbers get and how many irrelevant facts are mixed in. A family that
    cannot take the target (a negative count, a temperature below absolute zero) hands over to
    ``savings`` or ``game``; :func:`kind_of` tells which family was used.
    """
    if kind not in FAMILIES:
        raise ValueError(f"unknown MathQuiz kind {kind!r}; valid kinds: {', '.join(KINDS)}")
    d = float(difficulty)
    d = 0.5 if math.isnan(d) else min(1.0, max(0.0, d))
    target = int(target)
    fam = FAMILIES[kind]
    if not fam.holds(target):
        fam = FAMILIES[_pick(_SIGNED, rng)]
    for fam in (fam, fam, fam, FAMILIES["game"]):  # retries, then the family that always works
        built = [b for b in (_build(fam, d, target, rng) for _ in range(6)) if b is not None]
        built.sort(key=lambda b: abs(_level(_cost(*b)) - d))
        for events, notes in built:
            text = _render(fam, events, notes, target, rng)
            if abs(target) not in {int(n.replace(",", "")) for n in _ANY_NUMBER.findall(text)}:
                return text
    raise RuntimeError(f"could not write a {kind} question for {target}")  # pragma: no cover


# ---------------------------------------------------------------- wrong answers

_SLIPS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "add": ("sub",), "sub": ("add",), "addmul": ("submul", "add"), "submul": ("addmul", "sub"),
    "addsq": ("subsq", "add"), "subsq": ("addsq", "sub"), "mul": ("div", "add"), "div": ("mul", "sub"),
    "share": ("div",), "muladd": ("mulsub", "mul"), "mulsub": ("muladd", "mul"), "frac": ("fracof",),
    "fracof": ("frac",), "pcton": ("pctoff", "add"), "pctoff": ("pcton", "sub"),
    "rateadd": ("ratesub", "add"), "ratesub": ("rateadd", "sub"), "scale": ("mul", "div")})


def wrong_answers(text: str, k: int, rng: np.random.Generator) -> list[int]:
    """``k`` distinct plausible wrong answers to a question, never its true answer.

    For a question :func:`solve` reads: the result of a step skipped, a step done with the wrong
    operation or a number misread, and off-by-one slips. For other text: numbers built from the
    numbers in it.
    """
    problem = _parse(text)
    if problem is not None:
        fam, events = FAMILIES[problem.kind], problem.events
        slips: list[int | None] = []
        for i, (op, vals, src, dst) in enumerate(events[1:], 1):
            variants = [("mul", {"a": 1})] + [(s, vals) for s in _SLIPS.get(op, ())]
            for new_op, new_vals in variants:
                changed = (*events[:i], (new_op, new_vals, src, dst), *events[i + 1:])
                slips.append(_run(fam, changed, problem.ask))
        truth = problem.answer
    else:
        nums = [int(n.replace(",", "")) for n in _ANY_NUMBER.findall(text[:_MAX_TEXT] if isinstance(text, str) else "")
                if len(n) < 16][:12]
        slips = [n + d for n in nums for d in (-1, 1)]
        slips += [f(a, b) for i, a in enumerate(nums) for b in nums[i + 1:]
                  for f in (int.__add__, int.__sub__, int.__mul__)]
        truth = None
    pool = [s for s in dict.fromkeys(slips) if s is not None and s != truth]
    pool = [pool[i] for i in rng.permutation(len(pool))]
    base = truth if truth is not None else (pool[0] if pool else 10)
    pool += [base + d for d in (1, -1, 2, -2, 10, -10, 3, -3, 100, -100) if base + d != truth]
    out = list(dict.fromkeys(pool))
    while len(out) < k:
        extra = base + int(rng.integers(4, 1000)) * _pick((-1, 1), rng)
        if extra != truth and extra not in out:
            out.append(extra)
    return out[:max(0, k)]


if __name__ == "__main__":  # timing check: python -m skate.games.mathquiz.generator
    import time

    gen = np.random.default_rng(0)
    jobs = [(KINDS[i % len(KINDS)], i / 999, int(gen.integers(1, 1001))) for i in range(1000)]
    t0 = time.perf_counter()
    texts = [generate_question(kd, d, t, gen) for kd, d, t in jobs]
    t1 = time.perf_counter()
    answers = [solve(x) for x in texts]
    t2 = time.perf_counter()
    levels = [question_difficulty(x) for x in texts]
    t3 = time.perf_counter()
    assert answers == [t for _, _, t in jobs]
    print(f"per question: generate {(t1 - t0)  * 1e3 / len(jobs):.3f} ms, solve {(t2 - t1)  * 1e3 / len(jobs):.3f} ms, "
          f"difficulty {(t3 - t2)  * 1e3 / len(jobs):.3f} ms")
