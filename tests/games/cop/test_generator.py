"""COP's program generator, difficulty measure and distractor writer."""

from __future__ import annotations

import ast
import itertools
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from skate.games.cop.difficulty import code_difficulty
from skate.games.cop.distractors import make_distractors, normalize_answer
from skate.games.cop.generator import KINDS, generate_program, kind_of, predict_output

DIFFICULTIES = (0.0, 0.25, 0.5, 0.75, 1.0)
SEEDS = (0, 1, 2)
KNOB_SEEDS = range(8)
_TOKEN = re.compile(r"\w+|[^\w\s]")


def _program(kind: str, difficulty: float, seed: int) -> str:
    return generate_program(kind, difficulty, np.random.default_rng(seed))


@pytest.fixture(scope="module")
def corpus() -> dict[tuple[str, float, int], str]:
    """Programs for every kind, difficulty and a few seeds."""
    return {(k, d, s): _program(k, d, s) for k in KINDS for d in DIFFICULTIES for s in SEEDS}


@pytest.fixture(scope="module")
def knob_sample() -> list[tuple[str, float, float]]:
    """(kind, knob, measured difficulty) over many generated programs."""
    return [(k, d, code_difficulty(_program(k, d, 1000 + s))) for k in KINDS for d in DIFFICULTIES for s in KNOB_SEEDS]


def _ranks(values: list[float]) -> np.ndarray:
    """Ranks with ties averaged, as Spearman's correlation needs."""
    a = np.asarray(values, dtype=float)
    order = np.argsort(a, kind="stable")
    ranks = np.empty(len(a))
    ranks[order] = np.arange(len(a))
    _, inverse, counts = np.unique(a, return_inverse=True, return_counts=True)
    return (np.bincount(inverse, weights=ranks) / counts)[inverse]


def _spearman(x: list[float], y: list[float]) -> float:
    return float(np.corrcoef(_ranks(x), _ranks(y))[0, 1])


def _bigrams(code: str) -> frozenset[tuple[str, str]]:
    tokens = _TOKEN.findall(code)
    return frozenset(zip(tokens, tokens[1:], strict=False))


def _run_isolated(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-I", "-S", "-c", code],
        env={},
        capture_output=True,
        text=True,
        timeout=30,
    )


# ---------------------------------------------------------------------------
# generate_program
# ---------------------------------------------------------------------------


def test_kinds_cover_at_least_ten_behaviours() -> None:
    assert len(KINDS) >= 10
    assert len(set(KINDS)) == len(KINDS)


def test_programs_parse_and_carry_their_header(corpus: dict[tuple[str, float, int], str]) -> None:
    for (kind, _, _), code in corpus.items():
        ast.parse(code)
        first = code.splitlines()[0]
        assert re.fullmatch(rf"# {kind}: \S.*", first), first
        assert kind_of(code) == kind


def test_programs_print_short_deterministic_answers(corpus: dict[tuple[str, float, int], str]) -> None:
    for code in corpus.values():
        out = predict_output(code)
        assert out.strip()
        assert len(out) <= 400
        assert predict_output(code) == out


def test_programs_use_no_imports_or_input(corpus: dict[tuple[str, float, int], str]) -> None:
    for code in corpus.values():
        tree = ast.parse(code)
        assert not any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in ast.walk(tree))
        called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        assert not called & {"input", "open", "id", "hash", "exec", "eval", "__import__"}


def test_programs_run_the_same_in_an_isolated_interpreter(corpus: dict[tuple[str, float, int], str]) -> None:
    codes = [corpus[(k, d, SEEDS[0])] for k in KINDS for d in DIFFICULTIES]
    with ThreadPoolExecutor(max_workers=8) as pool:
        first = list(pool.map(_run_isolated, codes))
        second = list(pool.map(_run_isolated, codes))
    for code, a, b in zip(codes, first, second, strict=False):
        assert a.returncode == 0, (code, a.stderr)
        assert a.stderr == ""
        assert a.stdout.strip()
        assert a.stdout.rstrip("\n") == predict_output(code)
        assert b.stdout == a.stdout


def test_programs_run_fast(corpus: dict[tuple[str, float, int], str]) -> None:
    for code in (corpus[(k, 1.0, s)] for k in KINDS for s in SEEDS):
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            predict_output(code)
            best = min(best, time.perf_counter() - start)
        assert best < 0.05, code


def test_same_seed_gives_same_program() -> None:
    for kind in KINDS:
        for d in (0.0, 0.6, 1.0):
            assert _program(kind, d, 42) == _program(kind, d, 42)


def test_different_seeds_mostly_give_different_programs() -> None:
    for kind in KINDS:
        for d in (0.0, 0.5, 1.0):
            programs = {_program(kind, d, seed) for seed in range(10)}
            assert len(programs) >= 8, (kind, d)


def test_generation_is_safe_from_several_threads() -> None:
    jobs = [(k, d, s) for k in KINDS for d in (0.3, 0.9) for s in range(3)]
    stdout = sys.stdout
    with ThreadPoolExecutor(max_workers=8) as pool:
        threaded = list(pool.map(lambda job: _program(*job), jobs))
    assert sys.stdout is stdout
    assert threaded == [_program(*job) for job in jobs]


def test_unknown_kind_names_the_valid_kinds() -> None:
    with pytest.raises(ValueError) as info:
        generate_program("astrology", 0.5, np.random.default_rng(0))
    for kind in KINDS:
        assert kind in str(info.value)


def test_difficulty_is_clamped() -> None:
    for kind in KINDS[:4]:
        assert _program(kind, -3.0, 7) == _program(kind, 0.0, 7)
        assert _program(kind, 9.0, 7) == _program(kind, 1.0, 7)


def test_difficulty_knob_orders_measured_difficulty(knob_sample: list[tuple[str, float, float]]) -> None:
    knobs = [d for _, d, _ in knob_sample]
    measured = [m for _, _, m in knob_sample]
    assert _spearman(knobs, measured) > 0.7


def test_difficulty_knob_moves_every_kind(knob_sample: list[tuple[str, float, float]]) -> None:
    for kind in KINDS:
        low = np.mean([m for k, d, m in knob_sample if k == kind and d == 0.0])
        high = np.mean([m for k, d, m in knob_sample if k == kind and d == 1.0])
        assert high - low >= 0.35, (kind, low, high)


def test_hardest_programs_score_high_and_easiest_low(knob_sample: list[tuple[str, float, float]]) -> None:
    high = np.mean([m for _, d, m in knob_sample if d == 1.0])
    low = np.mean([m for _, d, m in knob_sample if d == 0.0])
    assert 0.75 <= high <= 0.97
    assert low <= 0.4


def test_programs_of_a_kind_are_structurally_varied() -> None:
    for kind in KINDS:
        sets = [_bigrams(_program(kind, 0.5, seed)) for seed in range(10)]
        assert len(set(sets)) == 10, kind
        similarities = [len(a & b) / len(a | b) for a, b in itertools.combinations(sets, 2)]
        assert np.mean(similarities) < 0.8, (kind, np.mean(similarities))


# ---------------------------------------------------------------------------
# code_difficulty
# ---------------------------------------------------------------------------

SIMPLE_LOOP = """
total = 0
for i in range(5):
    total += i
print(total)
"""

NESTED_RECURSIVE = """
def walk(n, memo={}):
    if n < 2:
        return n
    if n not in memo:
        memo[n] = walk(n - 1) + walk(n - 2)
    return memo[n]

grid = []
for i in range(6):
    row = []
    for j in range(6):
        if (i ^ j) & 1 and 0 < i < 5:
            row.append(walk(i + j) % 7)
        else:
            row.append(-j // 2)
    grid.append(row[::-2])
print([sum(r) for r in grid if r])
"""


def test_trivial_code_is_easy() -> None:
    assert code_difficulty("print(1+2)") < 0.2
    assert code_difficulty("print('hello')") < 0.2


def test_nested_recursive_code_is_harder_than_a_simple_loop() -> None:
    assert code_difficulty(NESTED_RECURSIVE) > code_difficulty(SIMPLE_LOOP) > code_difficulty("print(1+2)")


def test_tricky_constructs_raise_difficulty() -> None:
    plain = "fs = []\nfor i in range(3):\n    fs.append(i)\nprint(fs)\n"
    late = "fs = []\nfor i in range(3):\n    fs.append(lambda: i)\nprint([f() for f in fs])\n"
    assert code_difficulty(late) > code_difficulty(plain)
    flat = "x = 10\ny = x + 2\nprint(y)\n"
    guarded = "x = 10\ntry:\n    y = x + 2\nfinally:\n    x = 0\nprint(y)\n"
    assert code_difficulty(guarded) > code_difficulty(flat)


def test_unparsable_code_scores_one_half() -> None:
    assert code_difficulty("def broken(:\n    pass") == 0.5
    assert code_difficulty("print((1, 2)") == 0.5


@pytest.mark.parametrize(
    "code",
    [
        "",
        "# only a comment",
        "pass",
        "x = 1",
        SIMPLE_LOOP,
        NESTED_RECURSIVE,
        "print(1)\n" * 500,
        "x = " + "(" * 50 + "1" + ")" * 50,
    ],
)
def test_code_difficulty_is_a_deterministic_unit_score(code: str) -> None:
    value = code_difficulty(code)
    assert 0.0 <= value <= 1.0
    assert code_difficulty(code) == value


def test_code_difficulty_of_generated_programs_is_in_range(corpus: dict[tuple[str, float, int], str]) -> None:
    for code in corpus.values():
        assert 0.0 <= code_difficulty(code) <= 1.0


# ---------------------------------------------------------------------------
# kind_of, predict_output, normalize_answer
# ---------------------------------------------------------------------------


def test_kind_of_reads_only_a_known_first_line_header() -> None:
    assert kind_of("# strings: reversing words\nprint('a')\n") == "strings"
    assert kind_of("#recursion:   anything\nprint(1)") == "recursion"
    assert kind_of("# astrology: stars\nprint(1)") is None
    assert kind_of("print(1)\n# strings: too late\n") is None
    assert kind_of("") is None


def test_predict_output_captures_stdout_without_the_final_newline() -> None:
    assert predict_output("print(6 * 7)") == "42"
    assert predict_output("print('a')\nprint('b')\n") == "a\nb"
    assert predict_output("print(__name__)") == "__main__"


def test_predict_output_lets_exceptions_escape() -> None:
    with pytest.raises(ZeroDivisionError):
        predict_output("print(1 // 0)")


def test_normalize_answer_collapses_whitespace() -> None:
    assert normalize_answer("  a \n\t b  ") == "a b"
    assert normalize_answer("[1,  2]\n") == "[1, 2]"
    assert normalize_answer("x") == "x"


# ---------------------------------------------------------------------------
# make_distractors
# ---------------------------------------------------------------------------

ANSWERS = [
    "42",
    "-7",
    "0",
    "3.5",
    "-0.25",
    "[1, 2, 3]",
    "[]",
    "(1, 'a')",
    "{'a': 1}",
    "{}",
    "hello",
    "True",
    "False",
    "None",
    "a\nb",
    "x",
    "1 2 3",
    "[[1, 2], [3]]",
    "{'k': [1, 2], 'j': (3,)}",
    "'quoted'",
    "Hello World",
    "  spaced  out ",
    "a\n\nb",
    "\u00e9t\u00e9",
    "!!",
    "-",
    "0b1011",
    "{1, 2}",
    "word" * 40,
    "[" + ", ".join(map(str, range(60))) + "]",
    "(True, None, 'x')",
]


def _check_distractors(answer: str, n: int, seed: int) -> list[str]:
    got = make_distractors(answer, n, np.random.default_rng(seed))
    assert len(got) == n, answer
    keys = [normalize_answer(x) for x in got]
    assert len(set(keys)) == n, (answer, got)
    assert normalize_answer(answer) not in keys, (answer, got)
    assert all(isinstance(x, str) and x.strip() for x in got)
    assert make_distractors(answer, n, np.random.default_rng(seed)) == got
    return got


@pytest.mark.parametrize("n", [9, 20])
@pytest.mark.parametrize("answer", ANSWERS)
def test_distractors_are_distinct_wrong_answers(answer: str, n: int) -> None:
    _check_distractors(answer, n, seed=5)


def test_distractors_for_generated_program_outputs(corpus: dict[tuple[str, float, int], str]) -> None:
    for (_kind, d, seed), code in corpus.items():
        if seed == SEEDS[0]:
            for n in (9, 20):
                _check_distractors(predict_output(code), n, seed=int(d * 4))


def test_distractors_keep_the_shape_of_the_answer() -> None:
    def share(answer: str, test) -> float:
        got = make_distractors(answer, 9, np.random.default_rng(1))
        return sum(map(test, got)) / len(got)

    assert share("42", lambda x: re.fullmatch(r"-?\d+", x) is not None) >= 0.75
    assert share("[4, 8, 15, 16]", lambda x: x.startswith("[") and x.endswith("]")) >= 0.75
    assert share("{'a': 1, 'b': 2}", lambda x: x.startswith("{") and x.endswith("}")) >= 0.75
    assert share("hello", lambda x: x.isalpha()) >= 0.75
    assert share("a\nb\nc", lambda x: x.count("\n") >= 1) >= 0.75


def test_distractors_depend_only_on_the_rng() -> None:
    a = make_distractors("[3, 1, 2]", 9, np.random.default_rng(3))
    b = make_distractors("[3, 1, 2]", 9, np.random.default_rng(4))
    assert a != b
    assert make_distractors("7", 0, np.random.default_rng(0)) == []
