"""How the project's fake OpenAI-compatible server plays SCP (see :mod:`skate.llm.fake_server`).

Asked to answer (``question`` and ``options`` fields) a fake model reads the question's pieces
back out of its text, finds them in the corpus that ships with the package and picks the
option the document says is right with a probability that falls as the question gets harder
than its skill, otherwise a random number. (Questions cut from another corpus cannot be found:
it guesses.) Asked to set (``rules``/``documents``/``situation``/``history``) it picks a
question type, the first shown passage that makes an acceptable fragment of it and, for
prediction, three other shown paragraphs as the wrong continuations. When the request asks for
a ``reasoning`` output it writes some working first (naming another option on the way). Every
choice is drawn from the request's seed and the choice's index (the same pick with and without
reasoning).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping

from skate.games.base import FakePlayer, FakeRequest, seeded_random
from skate.games.scp.fragments import DEFAULT_SIZES, MARKUP_THRESHOLD
from skate.games.scp.questions import TYPES, can_start, similar
from skate.games.scp.reader import SCPQuery, difficulty, shipped_reader
from skate.players.simulated import know

_DOC = re.compile(r"^Document (\S+) \(domain: [^)]*\):", re.MULTILINE)
_PARA = re.compile(r"^\[(\d+)\] (.*)$", re.MULTILINE)
_LETTERED = re.compile(r"^([ABC]): (.*)$", re.MULTILINE)
_NUMBERED = re.compile(r"^([1-4])\. (.*)$", re.MULTILINE)


def read_question(prompt: str, options: tuple[str, ...]) -> SCPQuery:
    """The query a rendered SCP question shows, its pieces read back out of its text."""
    if prompt.startswith("The passage below was cut"):
        return SCPQuery(prompt, options, type="sequencing", parts=tuple(t for _, t in _LETTERED.findall(prompt)))
    if prompt.startswith("Three sentences were removed"):
        body, _, removed = prompt.partition("\n\nThe removed sentences:\n")
        masked = body.split("\n\n", 1)[1] if "\n\n" in body else body
        return SCPQuery(
            prompt, options, type="cloze", parts=tuple(t for _, t in _LETTERED.findall(removed)), masked=masked
        )
    context = prompt.split("Passage:\n", 1)[1] if "Passage:\n" in prompt else prompt
    return SCPQuery(prompt, options, type="prediction", parts=(context,))


class FakeSCPPlayer(FakePlayer):
    def claims(self, inputs: Mapping[str, str]) -> bool:
        return set(inputs) - {"guidance"} in ({"rules", "documents", "situation", "history"}, {"question", "options"})

    def reply(self, request: FakeRequest) -> str:
        return self._answer(request) if "options" in request.inputs else self._set(request)

    def _answer(self, req: FakeRequest) -> str:
        prompt, shown = req.inputs["question"], req.inputs["options"]
        rnd = seeded_random("answer", req.model, req.seed, req.index, prompt, shown)
        options = tuple(t for _, t in _NUMBERED.findall(shown))
        q = read_question(prompt, options)
        reader = shipped_reader()
        right = reader.solve(q) if len(options) == 4 else None
        if right is not None and rnd.random() < know(req.skill, difficulty(q, right)):
            pick = right + 1
        else:
            pick = rnd.randint(1, 4)
        head = ""
        if "reasoning" in req.outputs:
            other = pick % 4 + 1
            head = (
                f"[[ ## reasoning ## ]]\nOption {other} reads well at first, but following the text "
                f"closely, option {pick} is what the document says.\n\n"
            )
        return f"{head}[[ ## answer ## ]]\n{pick}\n\n[[ ## completed ## ]]"

    def _set(self, req: FakeRequest) -> str:
        rnd = seeded_random("set", req.model, req.seed, req.index)
        docs = []
        text = req.inputs["documents"]
        starts = [(m.start(), m.group(1)) for m in _DOC.finditer(text)] + [(len(text), "")]
        for (a, doc), (b, _) in itertools.pairwise(starts):
            paras = {int(n): p for n, p in _PARA.findall(text[a:b])}
            docs.append((doc, paras))
        qtypes = list(TYPES)
        rnd.shuffle(qtypes)
        for qtype in qtypes:
            n, min_chars = DEFAULT_SIZES[qtype]
            for doc, paras in docs:
                numbers = sorted(paras)
                firsts = list(numbers)
                rnd.shuffle(firsts)  # a retry looks elsewhere
                for start in firsts:
                    got = [paras.get(start + k) for k in range(n + (qtype == "prediction"))]
                    run = [p for p in got if p is not None]
                    if len(run) < len(got) or not can_start(run, qtype, doc, start, min_chars, MARKUP_THRESHOLD):
                        continue
                    wrong: list[str] = []
                    if qtype == "prediction":
                        pool = [numbers[i] for i in similar([paras[k] for k in numbers], run[0], len(numbers))]
                        wrong = [paras[k] for k in pool if k not in (start, start + 1) and len(paras[k]) >= 40][:3]
                        if len(wrong) < 3:
                            continue
                    return (
                        f"[[ ## document ## ]]\n{doc}\n\n[[ ## paragraph ## ]]\n{start}\n\n"
                        f"[[ ## question_type ## ]]\n{qtype}\n\n[[ ## distractors ## ]]\n{json.dumps(wrong)}\n\n"
                        "[[ ## completed ## ]]"
                    )
        doc, paras = docs[0] if docs else ("none", {1: ""})
        return (
            f"[[ ## document ## ]]\n{doc}\n\n[[ ## paragraph ## ]]\n{min(paras)}\n\n"
            "[[ ## question_type ## ]]\nsequencing\n\n[[ ## distractors ## ]]\n[]\n\n[[ ## completed ## ]]"
        )
