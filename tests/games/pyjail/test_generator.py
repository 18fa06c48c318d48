"""PyJail's jail writer, reader and attack repertoire, checked against the real sandbox.

Every claim about a jail (it reads back, its breaker captures the flag, naive inputs fail,
techniques below its difficulty fail and those at or above it work, flawed jails fail as named)
is checked by running the jail with the input in the session's sandbox, a fresh flag each time.
"""

from __future__ import annotations

import ast
import secrets
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from skate.embedders import HashingEmbedder
from skate.games.pyjail import generator as gen
from skate.games.pyjail.jails import maker, model
from skate.sandbox import Outcome
from skate.sandbox.call import call_function

STRENGTHS = (0.0, 0.25, 0.5, 0.75, 1.0)
SEEDS = (0, 1)
NAIVE = "__import__('os').environ['FLAG']"

HAND_WRITTEN = """\
import os

BLOCKED = ["import", "os", "system"]

def jail(user_input: str) -> str:
    for word in BLOCKED:
        if word in user_input:
            return "no"
    return str(eval(user_input))
"""


# Every form the writer chooses between (see generator._Writer.traits); each one is run in the
# sandbox on a few jails by test_every_form_of_jail_works_in_the_sandbox.
FORMS = frozenset(
    {
        *(f"checks:{s}" for s in ("inline", "predicates", "reasons", "validator", "raises", "guard", "gate")),
        *(f"ast:{s}" for s in ("inline", "function", "raises", "guard")),
        *(f"walk:{s}" for s in ("separate", "combined", "finder")),
        *(f"words:{s}" for s in ("loop", "any", "hits")),
        *(f"chars:{s}" for s in ("loop_in", "loop_set", "any", "found")),
        *(f"nodes:{s}" for s in ("isinstance", "type_in", "names")),
        *(f"helper:{s}" for s in ("ternary", "guard", "split", "assign")),
        *(f"with:{s}" for s in ("one", "nested", "parens")),
        *(f"censor:{c}" for c in range(5)),
        "run:function",
        "run:env",
        "run:else",
        "from_imports:True",
        "refuse:True",
        "main:True",
        "top_os:True",
    }
)
# Inputs some check refuses: the first one a jail's rules refuse is sent to it.
REFUSED = (
    NAIVE,
    "1" + " " * 60,
    "os",
    *maker._EXTRA_WORDS,
    *maker._MINOR_CHARS,
    ".",
    "lambda: 1",
    "(1).real",
    "x[0]",
    "'s'",
    "f(1)",
    "import os",
)


def captures(sandbox, source: str, text: str):
    """Run one input through the jail with a fresh flag: (captured?, the call's result)."""
    flag = "skate{" + secrets.token_hex(16) + "}"
    res = call_function(sandbox, source, "jail", text, env={"FLAG": flag})
    return res.shows(flag), res


def run_all(sandbox, pairs):
    """Whether each (source, input) pair captures, run a few at a time."""
    with ThreadPoolExecutor(3) as pool:
        return list(pool.map(lambda p: captures(sandbox, *p), pairs))


@pytest.fixture(scope="module")
def grid():
    """One jail per kind, strength and seed, with its info as read back."""
    out = {}
    for kind in gen.KINDS:
        for strength in STRENGTHS:
            for seed in SEEDS:
                source = gen.make_jail(kind, strength, np.random.default_rng(seed))
                out[kind, strength, seed] = (source, gen.read_jail(source))
    return out


@pytest.fixture(scope="module")
def form_cover():
    """Jails that between them use every form in FORMS at least twice, chosen greedily."""
    candidates = []
    families = {f.split(":")[0] for f in FORMS}
    absent = {"from_imports:False", "refuse:False", "main:False", "top_os:False"}
    for seed in range(40):
        for kind in gen.KINDS:
            for strength in STRENGTHS:
                rng = np.random.default_rng(300 + seed)
                _, source, traits = maker._write_jail(kind, strength, rng)
                # a new form of a known family, missing from FORMS, would go untested
                assert {t for t in traits if t.split(":")[0] in families} <= FORMS | absent
                candidates.append((source, traits & FORMS))
    need = dict.fromkeys(FORMS, 2)
    chosen = []
    while any(need.values()):
        best = max(range(len(candidates)), key=lambda i: sum(need[t] > 0 for t in candidates[i][1]))
        source, traits = candidates.pop(best)
        gain = [t for t in traits if need[t] > 0]
        assert gain, f"never written: {sorted(t for t, k in need.items() if k)}"
        for t in gain:
            need[t] -= 1
        chosen.append(source)
    return chosen


# ---------------------------------------------------------------------------- without a sandbox


def test_techniques_are_ordered_by_sophistication_on_the_unit_scale():
    soph = [t.sophistication for t in gen.TECHNIQUES]
    assert soph == sorted(soph) and len(set(soph)) == len(soph)
    assert soph[0] == 0.0 and all(0.0 <= s <= 1.0 for s in soph)
    assert len({t.name for t in gen.TECHNIQUES}) == len(gen.TECHNIQUES)


def test_every_jail_reads_back_with_its_kind_and_a_difficulty_monotone_in_strength(grid):
    for (kind, strength, seed), (source, info) in grid.items():
        assert info is not None, (kind, strength, seed)
        assert info.kind == kind and gen.kind_of(source) == kind
        assert 0.0 <= info.difficulty <= 1.0
        assert gen.difficulty(source) == info.difficulty
        assert info.technique in {t.name for t in gen.TECHNIQUES}
        ast.parse(source)
    for kind in gen.KINDS:
        for seed in SEEDS:
            levels = [grid[kind, s, seed][1].difficulty for s in STRENGTHS]
            assert levels == sorted(levels), (kind, levels)
            assert levels[-1] >= levels[0] + 0.6, (kind, levels)
            assert levels[0] <= 0.1 and levels[2] >= 0.3, (kind, levels)
            # roughly the strength asked for
            assert all(abs(d - s) <= 0.3 for d, s in zip(levels, STRENGTHS, strict=False)), (kind, levels)


def test_the_source_states_its_rules_in_plain_constants():
    source = gen.make_jail("names", 0.5, np.random.default_rng(4))
    tree = ast.parse(source)
    constants = {node.targets[0].id: ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)}
    (words,) = constants.values()
    assert tuple(words) == gen.read_jail(source).rules.banned_words
    assert "import" in words and "#" not in source
    length = gen.make_jail("length", 0.25, np.random.default_rng(4))
    assert gen.read_jail(length).rules.max_len == next(
        ast.literal_eval(n.value) for n in ast.parse(length).body if isinstance(n, ast.Assign)
    )


def test_same_seed_same_jail_and_attacks_other_seeds_vary_the_surface():
    def everything(seed):
        rng = np.random.default_rng(seed)
        source = gen.make_jail("characters", 0.6, rng)
        info = gen.read_jail(source)
        return (
            source,
            gen.breaker(info, rng),
            gen.attack_inputs(0.7, info, 4, rng),
            gen.attack_inputs(0.7, None, 4, rng),
            gen.flawed_jail("hangs", "ast", 0.3, rng),
        )

    assert everything(7) == everything(7)
    sources = {gen.make_jail(kind, 0.5, np.random.default_rng(seed)) for kind in gen.KINDS for seed in range(3)}
    assert len(sources) == 5 * 3


def test_jails_of_one_kind_and_level_are_far_apart_for_the_novelty_embedder():
    """A setter's jails only count when unique (hashing distance above 0.2 to its earlier ones):
    jails of the same kind and level written from different rng states must look different."""
    embedder = HashingEmbedder()
    same, cross, groups = [], [], []
    for kind in gen.KINDS:
        for strength in (0.25, 0.75):
            sources = [maker._write_jail(kind, strength, np.random.default_rng(100 + seed))[1] for seed in range(12)]
            groups.append(embedder.embed(sources))
            dist = 1.0 - groups[-1] @ groups[-1].T
            pairs = dist[np.triu_indices(len(sources), 1)]
            same.append(pairs)
            assert np.mean(pairs > 0.25) >= 0.6, (kind, strength, np.round(pairs, 2))
            assert all(len(s) <= 2500 for s in sources)
    for i, a in enumerate(groups):
        for b in groups[i + 1 :]:
            cross.append((1.0 - a @ b.T).ravel())
    same, cross = np.concatenate(same), np.concatenate(cross)
    assert np.mean(same > 0.25) >= 0.8, np.mean(same > 0.25)
    assert np.mean(same > embedder.threshold) >= 0.95
    assert np.mean(cross > 0.25) >= 0.95 and cross.mean() > same.mean() + 0.03
    # what was measured is what make_jail writes
    rng_a, rng_b = np.random.default_rng(3), np.random.default_rng(3)
    assert gen.make_jail("ast", 0.75, rng_a) == maker._write_jail("ast", 0.75, rng_b)[1]


def test_unknown_jails_are_not_read_and_get_a_heuristic_difficulty():
    assert gen.read_jail(HAND_WRITTEN) is None
    assert gen.kind_of(HAND_WRITTEN) is None
    assert gen.read_jail("def jail(user_input):\n    return user_input\n") is None
    assert gen.read_jail("this is not python (") is None
    weak = gen.difficulty("def jail(user_input):\n    return str(eval(user_input))\n")
    listed = gen.difficulty(HAND_WRITTEN)
    strict = gen.difficulty(
        HAND_WRITTEN.replace('"system"]', '"system", "__", "getattr"]').replace(
            "eval(user_input)", 'eval(user_input, {"__builtins__": {}})'
        )
    )
    assert 0.0 <= weak < listed < strict <= 1.0
    assert gen.difficulty("def jail(user_input):\n    return 'no'\n") == 0.9


def test_unknown_arguments_are_refused():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError):
        gen.make_jail("regex", 0.5, rng)
    with pytest.raises(ValueError):
        gen.flawed_jail("typo", "names", 0.5, rng)
    with pytest.raises(ValueError):
        gen.probe("telepathy", None, rng)


def test_attackers_try_distinct_inputs_most_sophisticated_first(grid):
    _, info = grid["names", 0.75, 0]
    rng = np.random.default_rng(3)
    inputs = gen.attack_inputs(0.65, info, 5, rng)
    assert len(inputs) == len(set(inputs)) == 5
    assert gen.attack_inputs(0.65, info, 0, rng) == []
    # a novice only knows the first tricks, even against an unknown jail
    novice = gen.attack_inputs(0.0, None, 3, np.random.default_rng(1))
    assert novice and all("__import__" in text for text in novice)


@pytest.mark.parametrize("kind", gen.KINDS)
def test_flawed_jails_parse_or_not_as_named(kind):
    for seed in range(4):
        rng = np.random.default_rng(seed)
        with pytest.raises(SyntaxError):
            ast.parse(gen.flawed_jail("syntax", kind, seed / 3, rng))
        tree = ast.parse(gen.flawed_jail("no_jail", kind, seed / 3, rng))
        assert not any(isinstance(n, ast.FunctionDef) and n.name == "jail" for n in tree.body)
        for flaw in gen.FLAWS:
            assert gen.read_jail(gen.flawed_jail(flaw, kind, seed / 3, rng)) is None


# ------------------------------------------------------------------------- in the real sandbox


def test_breakers_capture_and_the_naive_payload_fails_on_hard_jails(sandbox, grid):
    pairs, labels = [], []
    for key, (source, info) in grid.items():
        pairs.append((source, gen.breaker(info, np.random.default_rng(key[2] + 10))))
        labels.append((key, "breaker", True))
        if info.difficulty >= 0.3:
            pairs.append((source, NAIVE))
            labels.append((key, "naive", False))
    results = run_all(sandbox, pairs)
    wrong = [
        (label, pair[1], res.outcome, res.stderr[-200:])
        for label, pair, (ok, res) in zip(labels, pairs, results, strict=False)
        if ok != label[2]
    ]
    assert not wrong


def test_techniques_work_from_the_difficulty_up_and_fail_below_it(sandbox, grid):
    """Per jail: the technique just below its difficulty fails; the one at it and the most
    sophisticated one work, each fitted to the jail's rules."""
    pairs, labels = [], []
    for (kind, strength, seed), (source, info) in grid.items():
        if seed != 0:
            continue
        rng = np.random.default_rng(int(strength * 4))
        below = [t for t in gen.TECHNIQUES if t.sophistication < info.difficulty]
        at = next(t for t in gen.TECHNIQUES if t.sophistication >= info.difficulty)
        chosen = [(at, True), (gen.TECHNIQUES[-1], True)] + ([(below[-1], False)] if below else [])
        for tech, expect in chosen:
            pairs.append((source, gen.probe(tech, info, rng)))
            labels.append(((kind, strength), tech.name, expect))
    results = run_all(sandbox, pairs)
    wrong = [(label, pair[1]) for label, pair, (ok, _) in zip(labels, pairs, results, strict=False) if ok != label[2]]
    assert not wrong


def test_success_rises_with_the_attackers_skill(sandbox, grid):
    """Novices' repertoires fail on hard jails; experts' include a capture on every jail."""
    pairs, labels = [], []
    for (kind, strength, seed), (source, info) in grid.items():
        if seed != 1:
            continue
        rng = np.random.default_rng(int(strength * 4) + 20)
        for text in gen.attack_inputs(1.0, info, 2, rng, noise=0.0):
            pairs.append((source, text))
            labels.append(((kind, strength), "expert"))
        if info.difficulty >= 0.5:
            for text in gen.attack_inputs(0.25, info, 3, rng):
                pairs.append((source, text))
                labels.append(((kind, strength), "novice"))
    results = run_all(sandbox, pairs)
    expert = {}
    novice = []
    for label, (ok, _) in zip(labels, results, strict=False):
        if label[1] == "expert":
            expert[label[0]] = expert.get(label[0], False) or ok
        else:
            novice.append(ok)
    assert all(expert.values()) and len(expert) == len(gen.KINDS) * len(STRENGTHS)
    assert novice and sum(novice) <= 0.1 * len(novice)


def test_every_form_of_jail_works_in_the_sandbox(sandbox, form_cover):
    """On jails covering every shape and spelling the writer uses: the breaker captures, the
    technique just below the difficulty does not, a harmless input runs and returns, and an input
    the rules refuse is refused (the jail answers, it does not crash)."""
    pairs, labels = [], []
    for source in form_cover:
        info = gen.read_jail(source)
        assert info is not None and len(source) <= 2500
        rng = np.random.default_rng(len(source))
        pairs += [(source, gen.breaker(info, rng)), (source, "1")]
        labels += ["breaker", "harmless"]
        below = [t for t in gen.TECHNIQUES if t.sophistication < info.difficulty]
        if below:
            pairs.append((source, gen.probe(below[-1], info, rng)))
            labels.append("below")
        refused = next((text for text in REFUSED if not model._static_ok(info.rules, text)), None)
        if refused is not None:
            pairs.append((source, refused))
            labels.append("refused")
    assert labels.count("refused") >= len(form_cover) // 2
    results = run_all(sandbox, pairs)
    wrong = []
    for label, (source, text), (ok, res) in zip(labels, pairs, results, strict=False):
        expected = {
            "breaker": ok,
            "below": not ok,
            "harmless": not ok and res.outcome is Outcome.OK and res.value is not None,
            "refused": not ok and res.outcome is Outcome.OK and res.value is not None,
        }
        if not expected[label]:
            wrong.append((label, text, res.outcome, res.value, res.stderr[-300:], source))
    assert not wrong


def test_unbreakable_jails_resist_the_whole_repertoire(sandbox, grid):
    breakers = [
        gen.breaker(info, np.random.default_rng(0))
        for (_, s, seed), (_, info) in grid.items()
        if seed == 0 and s in (0.5, 1.0)
    ]
    pairs = []
    for i, kind in enumerate(gen.KINDS):
        rng = np.random.default_rng(i)
        source = gen.flawed_jail("unbreakable", kind, 0.2 * i, rng)
        assert "def jail(" in source
        inputs = [gen.probe(t, None, rng) for t in gen.TECHNIQUES] + breakers[i::2]
        pairs += [(source, text) for text in inputs]
    results = run_all(sandbox, pairs)
    assert not [pair[1] for pair, (ok, _) in zip(pairs, results, strict=False) if ok]


def test_a_hanging_jail_times_out_even_on_empty_input(sandbox):
    source = gen.flawed_jail("hangs", "rewrite", 0.5, np.random.default_rng(2))
    ok, res = captures(sandbox, source, "")
    assert not ok and res.outcome is Outcome.TIMEOUT
