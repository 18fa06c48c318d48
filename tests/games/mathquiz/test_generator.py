"""MathQuiz's word-problem generator, reader, difficulty measure and wrong-answer writer."""

from __future__ import annotations

import ast
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from skate.embedders import HashingEmbedder, NoveltyIndex
from skate.games.mathquiz import generator as mq
from skate.games.mathquiz.generator import KINDS, generate_question, kind_of, question_difficulty, solve, wrong_answers
from skate.games.mathquiz.questions import reader as question_reader
from skate.games.mathquiz.questions import templates as question_templates

GRID = tuple(round(0.1 * i, 1) for i in range(11))
COUNT_KINDS = ("shopping", "inventory", "sharing", "recipes", "travel", "geometry", "comparison")
NUMBER = re.compile(r"\d[\d,]*")

# Hand-written questions in the generator's forms, with answers worked out by hand.
MARBLES = (
    "Maya has 20 marbles. She gives away a quarter of them. Omar gives her 7 more marbles. "
    "How many marbles does Maya have now?"
)  # 20 - 5 + 7
HAND_WRITTEN = {
    MARBLES: 22,
    "Hugo starts a quiz with 40 points. He answers 3 questions right, worth 5 points each. "
    "A penalty card removes 20% of his points. What is Hugo's score at the end?": 44,  # (40 + 15) * 0.8
    "Lena has 12 stamps. Omar has 6 more than three times as many stamps as Lena. "
    "Rosa has half as many stamps as Omar. How many stamps does Rosa have?": 21,  # (36 + 6) / 2
    "To begin with, the probe is at 4 degrees below zero. It cools down by 9 degrees. "
    "What is the temperature of the probe now, in degrees?": -13,
}


def stated_numbers(text: str) -> set[int]:
    return {int(n.replace(",", "")) for n in NUMBER.findall(text)}


def sentences(text: str) -> list[str]:
    return re.split(r"(?<=[.?])\s+", text)


def questions(n_seeds: int, targets: list[int] | None = None, grid: tuple[float, ...] = GRID):
    """(kind, difficulty, target, text) over seeds, kinds and a difficulty grid; random targets
    in 1..1000 unless ``targets`` are given."""
    for seed in range(n_seeds):
        rng = np.random.default_rng(seed)
        for kind in KINDS:
            for d in grid:
                t = int(rng.integers(1, 1001)) if targets is None else targets[int(rng.integers(len(targets)))]
                yield kind, d, t, generate_question(kind, d, t, rng)


# ---------------------------------------------------------------- the API


def test_kinds_are_short_lowercase_and_distinct_from_cop():
    assert 8 <= len(KINDS) <= 10 and len(set(KINDS)) == len(KINDS)
    assert all(re.fullmatch(r"[a-z]+", k) for k in KINDS)
    cop = {
        "arithmetic",
        "strings",
        "slicing",
        "dicts",
        "recursion",
        "closures",
        "sorting",
        "bitwise",
        "generators",
        "exceptions",
        "classes",
        "comprehensions",
    }
    assert not cop & set(KINDS)


def test_unknown_kind_names_the_valid_ones():
    with pytest.raises(ValueError) as err:
        generate_question("algebra", 0.5, 10, np.random.default_rng(0))
    assert all(k in str(err.value) for k in KINDS)


def test_difficulty_is_clipped():
    for kind in KINDS:
        for out, inside in ((-3.0, 0.0), (7.0, 1.0)):
            a = generate_question(kind, out, 321, np.random.default_rng(5))
            assert a == generate_question(kind, inside, 321, np.random.default_rng(5))


def test_only_stdlib_and_numpy():
    """The question writer (generator.py and the questions package it fronts) needs nothing beyond
    the standard library and numpy, and imports of skate only from within that package."""
    own = "skate.games.mathquiz.questions"
    files = [Path(mq.__file__), *sorted((Path(mq.__file__).parent / "questions").glob("*.py"))]
    assert len(files) > 2
    for f in files:
        tree = ast.parse(f.read_text())
        mods = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and not n.level}
        mods |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        outside = {m.split(".")[0] for m in mods if not (m == own or m.startswith(own + "."))}
        assert outside - {"__future__", "numpy"} <= set(sys.stdlib_module_names), (f.name, outside)


# ---------------------------------------------------------------- 1. exactness, 2. target never stated


def test_solve_reads_back_every_target_in_the_default_range():
    for kind, d, t, text in questions(15):
        assert solve(text) == t, (kind, d, t, text)
        assert kind_of(text) == kind
        assert abs(t) not in stated_numbers(text), text


@pytest.mark.parametrize("target", [0, 1, 2, 3, 7, 97, 1000, 4096, 99_991, 10**6, -1, -2, -12, -273, -274, -999, -1000])
def test_extreme_targets(target):
    for seed in range(3):
        rng = np.random.default_rng(seed)
        for kind in KINDS:
            for d in (0.0, 0.3, 0.6, 1.0):
                text = generate_question(kind, d, target, rng)
                assert solve(text) == target, (kind, d, text)
                assert abs(target) not in stated_numbers(text), text
                used = kind_of(text)
                if target < 0 and kind in COUNT_KINDS:  # no negative apples: a signed family takes over
                    assert used in ("savings", "game")
                elif not (kind == "temperature" and not -273 <= target <= 5000):
                    assert used == kind


def test_every_step_is_whole_numbers():
    # A story whose division does not come out exact is not a question of this game.
    assert solve("Maya has 10 marbles. She gives away a third of them. How many marbles does Maya have now?") is None
    assert (
        solve(
            "Hugo starts a quiz with 41 points. A penalty card removes 20% of his points. "
            "What is Hugo's score at the end?"
        )
        is None
    )
    # ... nor is one that makes a count negative.
    assert solve("Maya has 10 marbles. She loses 12 of them. How many marbles does Maya have now?") is None


# ---------------------------------------------------------------- 3. difficulty


def test_measure_tracks_the_knob():
    ds, measured = [], []
    for _, d, _, text in questions(8):
        ds.append(d)
        measured.append(question_difficulty(text))
    ds, measured = np.array(ds), np.array(measured)
    assert np.abs(ds - measured).mean() < 0.1
    assert np.corrcoef(ds, measured)[0, 1] > 0.9
    assert measured.min() <= 0.05 and measured.max() >= 0.95
    assert ((measured >= 0) & (measured <= 1)).all()


def test_steps_grow_with_difficulty():
    for kind in KINDS:
        for d, lo, hi in ((0.0, 1, 2), (1.0, 6, 8)):
            for seed in range(5):
                problem = question_reader._parse(generate_question(kind, d, 500, np.random.default_rng(seed)))
                assert lo <= len(problem.events) - 1 <= hi, (kind, d, problem.events)
    hard = question_reader._parse(generate_question("inventory", 1.0, 500, np.random.default_rng(0)))
    assert hard.notes >= 1  # irrelevant facts at high difficulty


def test_harder_operations_cost_more():
    by_op = [  # one step each: add < multiply < exact division < percentage
        "Hugo starts a quiz with 40 points. He wins 12 more points. What is Hugo's score at the end?",
        "Hugo starts a quiz with 40 points. A bonus card multiplies his score by 3. What is Hugo's score at the end?",
        "Maya has 40 marbles. She divides them into 4 equal piles and keeps one pile. "
        "How many marbles does Maya have now?",
        "Hugo starts a quiz with 40 points. A penalty card removes 25% of his points. What is Hugo's score at the end?",
    ]
    levels = [question_difficulty(t) for t in by_op]
    assert all(solve(t) is not None for t in by_op)
    assert levels == sorted(levels) and len(set(levels)) == len(levels)
    base = "Hugo starts a quiz with 40 points. He wins 12 more points. He wins 13 more points. "
    ask = "What is Hugo's score at the end?"
    longer = question_difficulty(base + ask)
    assert longer > levels[0]  # more steps
    assert question_difficulty(base + "The quiz lasts 30 minutes. " + ask) > longer  # a distractor
    big = "Hugo starts a quiz with 40,000 points. He wins 12,345 more points. He wins 13,579 more points. "
    assert question_difficulty(big + ask) > longer  # bigger numbers


def test_measure_works_on_any_text():
    texts = [
        "",
        " ",
        "Hello there.",
        "ünïcödé ✓ 🙂 " * 50,
        "x" * 100_000,
        "1" * 5000,
        "A shop sells 3 apples for 2 dollars. How much do 12 apples cost?",
        "A train travels 120 km at 40 km per hour, then 60% of the way back, every 15 minutes. "
        "What is 17 times 23 minus 5, divided equally among 4 people?",
    ]
    levels = [question_difficulty(t) for t in texts]
    assert all(0.0 <= x <= 1.0 for x in levels)
    assert levels == [question_difficulty(t) for t in texts]
    assert levels[0] == 0.0 and levels[-1] > levels[-2] > 0.0


# ---------------------------------------------------------------- 4. variety


@pytest.mark.parametrize("level", [0.1, 0.5, 0.9])
def test_one_setter_rarely_repeats_itself(level):
    for seed in range(3):
        rng = np.random.default_rng(100 + seed)
        index = NoveltyIndex(HashingEmbedder(threshold=0.2))
        rejected = 0
        for i in range(50):
            d = float(np.clip(level + rng.uniform(-0.1, 0.1), 0, 1))
            text = generate_question(KINDS[i % len(KINDS)], d, int(rng.integers(1, 1001)), rng)
            unique, _, vec = index.check("setter", text)
            if unique:
                index.add("setter", vec)
            else:
                rejected += 1
        assert rejected / 50 < 0.15, (level, seed, rejected)


# ---------------------------------------------------------------- 5. solve is a real reader


def test_hand_written_questions_are_read():
    for text, answer in HAND_WRITTEN.items():
        assert solve(text) == answer, text
    assert kind_of(MARBLES) == "sharing"


def test_text_outside_the_forms_is_not_read():
    paraphrase = (
        "Maya had 20 marbles and gave a quarter of them away; then Omar handed her another 7. "
        "How many marbles has she got?"
    )
    others = [
        "",
        "   ",
        "How many?",
        "The quick brown fox jumps over the lazy dog. What colour is it?",
        paraphrase,
        "ünïcödé ✓ 🙂. ¿Qué?",
        "x" * 200_000,
        MARBLES * 300,
        MARBLES.upper(),
        MARBLES.replace("She gives", "He gives"),  # the pronoun does not fit Maya
        MARBLES.replace("How many marbles", "How many stamps"),  # not the objects of the story
        "9" * 5000 + ". " + MARBLES,
        MARBLES.replace("20", "9" * 400),
    ]
    for text in others:
        assert solve(text) is None and kind_of(text) is None
        assert len(wrong_answers(text, 3, np.random.default_rng(0))) == 3


def test_mangled_questions_never_raise():
    rng = np.random.default_rng(4)
    for _i, (_, _, _, text) in enumerate(questions(2, targets=[-50, 0, 7, 900])):
        parts = sentences(text)
        mangled = [
            NUMBER.sub("0", text),
            NUMBER.sub("9" * 30, text),
            NUMBER.sub("1", text, count=2),
            " ".join(parts[::-1]),
            " ".join(parts[:1] + parts[1:2] * 3 + parts[1:]),
            text.replace("%", "000%"),
            text.replace(" ", "\n"),
            text + " " + text,
        ]
        for bad in mangled:
            assert solve(bad) is None or isinstance(solve(bad), int)
            assert 0.0 <= question_difficulty(bad) <= 1.0
            assert kind_of(bad) in (*KINDS, None)
            assert len(set(wrong_answers(bad, 4, rng))) == 4


def test_a_question_with_a_sentence_missing_is_not_misread():
    for _kind, _, t, text in questions(3, grid=(0.3, 0.7, 1.0)):
        parts = sentences(text)
        problem = question_reader._parse(text)
        for i in range(len(parts)):
            shorter = " ".join(parts[:i] + parts[i + 1 :])
            got = solve(shorter)
            if i in (0, len(parts) - 1):  # no opening value, or no question
                assert got is None, shorter
            elif got is not None and question_reader._parse(shorter).notes < problem.notes:
                assert got == t  # an irrelevant fact was dropped
            else:
                assert got != t  # a step was dropped: None, or the answer of the shorter story
    assert solve(MARBLES.replace("She gives away a quarter of them. ", "")) == 27
    assert solve(MARBLES.replace("Omar gives her 7 more marbles. ", "")) == 15


def test_a_truncated_question_is_not_read():
    rng = np.random.default_rng(9)
    for _, _, _, text in questions(2, grid=(0.2, 0.8)):
        for cut in rng.integers(1, len(text) - 1, 10):
            assert solve(text[:cut]) is None, text[:cut]


def test_questions_read_like_plain_prose():
    for _, _, t, text in questions(2):
        assert text.isascii() and text.isprintable() and text.endswith("?")
        assert not re.search(r"[<>#{}\[\]|_\\]", text)
        for s in sentences(text):
            assert s[0].isupper() or s[0].isdigit(), s
            assert s.endswith((".", "?"))
        assert str(t) not in text.split()


def test_every_template_round_trips():
    # Each template renders to text that the same template reads back slot for slot.
    rng = np.random.default_rng(3)
    for fam in mq.FAMILIES.values():
        for op, templates in fam.templates.items():
            for tpl in templates:
                for _ in range(5):
                    ctx = {
                        **question_templates._PRONOUNS["f"],
                        "name": "Maya",
                        "new": "Omar",
                        "friend": "Hugo",
                        "a": "1,234",
                        "b": "7",
                        "c": "42",
                        "times": "three times",
                        "frac": "two fifths",
                        "Frac": "Two fifths",
                        **{w: question_templates._pick(ws, rng) for w, ws in fam.words.items()},
                    }
                    got = tpl.read(tpl.render(ctx, rng))
                    assert got is not None and all(ctx[k] == v for k, v in got.items()), (fam.kind, op, tpl)


# ---------------------------------------------------------------- 6. wrong answers


def test_wrong_answers_are_distinct_and_wrong():
    for _, _, t, text in questions(2, grid=(0.0, 0.5, 1.0)):
        for k in range(6):
            wrong = wrong_answers(text, k, np.random.default_rng(k))
            assert len(wrong) == k == len(set(wrong)) and t not in wrong
            assert all(type(w) is int for w in wrong)
            assert wrong == wrong_answers(text, k, np.random.default_rng(k))


def test_wrong_answers_are_plausible_slips():
    slips = set(wrong_answers(MARBLES, 5, np.random.default_rng(0)))
    # 27 skips the quarter, 15 skips the gift, 12 adds the quarter instead of taking it off,
    # 8 keeps the quarter given away, 21/23 are off by one.
    assert slips <= {27, 15, 12, 8, 21, 23, 13, 2, 24, 20, 32}
    assert len(slips & {27, 15, 12, 8}) >= 3
    prose = "A shop sells 3 apples for 2 dollars. How much do 12 apples cost?"
    other = wrong_answers(prose, 5, np.random.default_rng(0))
    assert len(set(other)) == 5 and other == wrong_answers(prose, 5, np.random.default_rng(0))


# ---------------------------------------------------------------- 7. determinism, threads


def test_same_seed_same_text():
    for kind in KINDS:
        a = [generate_question(kind, d, 77, np.random.default_rng(11)) for d in GRID]
        b = [generate_question(kind, d, 77, np.random.default_rng(11)) for d in GRID]
        assert a == b
    texts = {generate_question("sharing", 0.5, 77, np.random.default_rng(s)) for s in range(20)}
    assert len(texts) == 20


def test_thread_safe():
    jobs = [(KINDS[i % len(KINDS)], (i % 11) / 10, 10 + i) for i in range(200)]

    def run(i: int) -> tuple[str, int | None, float]:
        kind, d, t = jobs[i]
        text = generate_question(kind, d, t, np.random.default_rng(i))
        return text, solve(text), question_difficulty(text)

    serial = [run(i) for i in range(len(jobs))]
    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(run, range(len(jobs)))) == serial
