"""Reading a multiple-choice answer's probabilities from the model's own token probabilities.

A model asked to reply with an option's label alone (``A``, ``B``, ... or ``1``, ``2``, ...)
gives, at its reply's first token, a probability for every label: the provider's
``logprobs``/``top_logprobs`` (OpenAI, llama.cpp's server, vLLM, ...). So one call with
``max_tokens`` of a few tokens gives p(option) for every option, where sampling would ask for the
reply again and again to estimate the same numbers.

:func:`option_probabilities` turns a reply's token log-probabilities into one probability per
option at a temperature (what sampling at that temperature would pick, given that the reply
starts with a label), or says why it cannot:

- the provider gave no log-probabilities;
- the reply's first token (after whitespace or opening marks such as ``(`` or ``**``) is not
  where the labels are: together they hold less than ``min_mass`` of its probability (the model
  writes something else first, "The answer is B");
- a label is missing from the alternatives the provider returned (it returned fewer than there
  are options, or a label fell outside its top ``k``).

Each label's probability sums the forms a tokenizer may give it (``"B"``, ``" B"``, ``"B."``,
``"B)"``); lower case does not count (a reader of the reply would not take ``b`` for ``B``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

# Characters that may open a reply before its label, and may close a label's token.
_OPENERS = " \t\n\r([{*\"'`_#>"
_CLOSERS = " \t\n\r.)]}:*\"'`,;_"

# How many alternatives a label read asks for (OpenAI's cap, which llama.cpp's server takes too).
TOP_LOGPROBS = 20
# How many tokens a label read may generate: the label and whatever opens it ("**", "(").
LABEL_TOKENS = 4


@dataclass(frozen=True)
class ChoiceRead:
    """One read of a model's answer to a multiple-choice query: a probability per option, or
    why there is none (then p(correct) is sampled instead), or void (the call failed)."""

    probs: tuple[float, ...] | None = None
    why: str = ""
    void: bool = False
    kind: str = ""  # what kind of failure (no_logprobs, no_alternatives, no_label, missing_option, not_a_label)

    @property
    def ok(self) -> bool:
        return self.probs is not None


def label_of(token: str, labels: Sequence[str]) -> str | None:
    """The option label a token stands for (``" B"``, ``"B."``, ``"(B"``), or None."""
    core = token.strip(_OPENERS).rstrip(_CLOSERS)
    return core if core in labels else None


def _is_opening(token: str) -> bool:
    """Whether a generated token is only whitespace or marks that may open a label."""
    return not token.strip(_OPENERS)


def option_probabilities(
    tokens: Sequence[dict] | None, labels: Sequence[str], temperature: float, min_mass: float = 0.5
) -> ChoiceRead:
    """One probability per label (in ``labels``' order) at ``temperature`` from a reply's
    ``tokens`` (:data:`skate.llm.wire.TokenLogprobs`, each with its ``top`` alternatives), read
    at the reply's first token that is not only whitespace or opening marks; or a
    :class:`ChoiceRead` saying why not. Temperature 0 puts all the probability on the most likely
    label."""
    if not tokens:
        return ChoiceRead(why="the provider gave no log-probabilities", kind="no_logprobs")
    position = next((t for t in tokens if not _is_opening(str(t.get("token", "")))), None)
    if position is None:
        return ChoiceRead(why="the reply held no label", kind="no_label")
    top = position.get("top") or []
    if not top:
        return ChoiceRead(
            why="the provider gave no alternatives (top_logprobs) for the reply's first token", kind="no_alternatives"
        )
    logp: dict[str, list[float]] = {label: [] for label in labels}
    for token, lp in top:
        label = label_of(str(token), labels)
        if label is not None and lp is not None and math.isfinite(lp):
            logp[label].append(float(lp))
    mass = sum(math.exp(lp) for lps in logp.values() for lp in lps)
    missing = [label for label, lps in logp.items() if not lps]
    if missing:
        return ChoiceRead(
            why=f"option {', '.join(missing)} is not among the {len(top)} alternatives the provider "
            f"returned for the reply's first token",
            kind="missing_option",
        )
    if mass < min_mass:
        first = str(position.get("token", ""))
        return ChoiceRead(
            why=f"the reply does not start with a label: the labels hold {mass:.0%} of its first "
            f"token's probability (it wrote {first!r} first)",
            kind="not_a_label",
        )
    if temperature <= 0:
        best = max(labels, key=lambda label: max(logp[label]))
        return ChoiceRead(tuple(1.0 if label == best else 0.0 for label in labels))
    # p(label) at temperature T: each form's probability raised to 1/T, summed, normalised over
    # the labels (what sampling at T picks among them), computed in log space.
    scaled = {label: [lp / temperature for lp in lps] for label, lps in logp.items()}
    peak = max(v for vs in scaled.values() for v in vs)
    weight = {label: sum(math.exp(v - peak) for v in vs) for label, vs in scaled.items()}
    total = sum(weight.values())
    return ChoiceRead(tuple(weight[label] / total for label in labels))
