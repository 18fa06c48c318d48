"""PyJail's DSPy modules: writing a jail, and attacking one try at a time.

The attacker is multi-turn: each try is one request that carries the session so far (every
earlier input and what the jail gave back), so a model can learn from what its earlier inputs
did. It never sees the setter's solution or any flag (outputs are shown with the flag redacted,
though a try that shows the flag ends the session anyway).
"""

from __future__ import annotations

import dspy

import skate.llm  # noqa: F401  (environment defaults before dspy is imported)
from skate.games.base import GameEnv
from skate.games.pyjail.rules import AttackQuery, JailProposal, PyJailGame
from skate.llm.modules import (
    AnswererModule,
    GameModules,
    SetterModule,
    guidance_field,
    percent,
    render_history,
    render_situation,
    strip_fences,
    with_reasoning,
)
from skate.runlog.records import PASS_MARK, SetterContext

RULES = """\
The tournament has {n_players} players. Each round every player writes one jail, and then every \
player, the author included, attacks every jail.

Your jail is a Python 3 function `def jail(user_input: str) -> str`:
- the attacker's text arrives as `user_input`; most jails run it as Python (`eval` or `exec`) \
after a check meant to stop the obvious attacks (a word or character filter, a length limit, \
limited builtins, a rewrite of the text) and return the result as a string;
- the flag is never in the source: when the jail runs, it is in {flag_location}, and it is new \
on every run, so nobody can guess it. The jail's code must not name it (a variable `FLAG` does \
not exist and fails with NameError); an attacker captures it by making the jail's code read it \
and print or return it;
- at most {max_chars} characters, standard library only.

An example of the shape (write your own jail, not this one):

```python
def jail(user_input: str) -> str:
    if "environ" in user_input or "getenv" in user_input:
        return "blocked"
    return str(eval(user_input))
```

It refuses `__import__("os").environ["FLAG"]` but not \
`vars(__import__("os"))["envi" + "ron"]["FLAG"]`, which builds the blocked word from two \
pieces: a careful attacker gets through, a hasty one does not.

Before your jail counts, you attack it yourself in a new conversation that shows you only its \
source: {tries} inputs, each run through the jail, each try seeing what the earlier ones gave. \
The jail is accepted only if you capture the flag. Then every player, you included, attacks it \
in sessions of {tries} inputs each{source_note}.

Scoring: one point for each of your jails that is accepted, and one point for each jail (yours \
or another player's) you break in at least {pass_mark} of your sessions. The best jail is one \
you can break reliably and the others cannot. A jail is rejected when it does not parse, has no \
`jail` function, is longer than {max_chars} characters, when you cannot break it yourself, or \
when it is too similar to one of your own earlier jails. Jails and inputs run in an isolated \
sandbox with no network and a {timeout:g} s time limit per run."""


class WriteJail(dspy.Signature):
    """Write your jail for this round of a capture-the-flag tournament: a function
    `jail(user_input: str) -> str` that blocks the easy ways to the flag and leaves one that
    you can find again from the source alone. Follow the rules and the guidance; if an earlier
    attempt this round was rejected, fix exactly what the rejection names."""

    rules: str = dspy.InputField(desc="how the game is played and scored")
    guidance: str = guidance_field()
    flag_location: str = dspy.InputField(desc="where the jail's process finds the flag at run time")
    history: str = dspy.InputField(desc="earlier jails of the game you are allowed to see; may be empty")
    situation: str = dspy.InputField(desc="the round, attempts left, and any rejected attempts this round")
    jail: str = dspy.OutputField(desc="the jail's complete Python source, defining jail(user_input)")


class AttackJail(dspy.Signature):
    """Capture the flag from a Python jail.

    Your input is passed as the string `user_input` to `jail(user_input)`. The flag is in the
    environment variable FLAG of the process the jail runs in and is new on every run: typing
    the word FLAG or a guess gets nothing. You capture it when the jail, running your text (most
    jails `eval` or `exec` it after a check), prints or returns the flag: directly with
    `__import__("os").environ["FLAG"]`, or, where the jail's check blocks a word or a character,
    with an expression that builds what is blocked from pieces the check lets through (joined
    strings, `getattr`, `vars`, `chr`). Read what the jail checks and what your earlier inputs
    gave, and send something new each try. Give only the input: no jail source, no comment, and
    no quotes around it (your text reaches the jail exactly as you write it)."""

    jail: str = dspy.InputField(desc="the jail's source code (or a note that it is hidden)")
    earlier_tries: str = dspy.InputField(desc="your earlier inputs in this session and what each gave")
    tries_left: str = dspy.InputField(desc="how many inputs you have left in this session, this one included")
    input: str = dspy.OutputField(desc="the exact text to pass to jail(), nothing else")


FLAG_LOCATION = "the environment variable FLAG (os.environ['FLAG'] inside the jail's process)"


class PyJailSetter(SetterModule):
    plain_kinds = {"jail": "code"}  # the plain reply format: the jail in a fenced block

    def __init__(self, game: PyJailGame, pass_mark: float = PASS_MARK) -> None:
        super().__init__(WriteJail)
        self.game, self.pass_mark = game, pass_mark

    def inputs(self, ctx: SetterContext) -> dict[str, str]:
        g = self.game
        note = ", shown its source" if g.show_source else ", shown only what it gives back, not its source"
        rules = RULES.format(
            n_players=len(ctx.players),
            flag_location=FLAG_LOCATION,
            tries=g.tries,
            source_note=note,
            pass_mark=percent(self.pass_mark),
            max_chars=g.max_jail_chars,
            timeout=g.limits.timeout_s,
        )
        return {
            "rules": rules,
            "guidance": self.guidance(ctx),
            "flag_location": FLAG_LOCATION,
            "situation": render_situation(ctx),
            "history": render_history(ctx),
        }

    def parse(self, text: str) -> JailProposal:
        jail = self.field(text, "jail")
        if not jail.strip():
            return JailProposal(
                "", note="the reply has no jail: write it under a JAIL: heading, in a ```python fenced block"
            )
        return JailProposal(strip_fences(jail))

    def label(self, proposal: JailProposal) -> dict[str, str]:
        return {"jail": proposal.source}


def render_tries(query: AttackQuery) -> str:
    if not query.tries:
        return "(no earlier inputs in this session)"
    out = []
    for i, t in enumerate(query.tries, 1):
        out.append(f"Input {i}: {t.input!r}\nResult: {t.shown}")
    return "\n\n".join(out)


class PyJailAttacker(AnswererModule):
    """One try of an attack session. With ``reasoning`` the model first writes its working in a
    ``reasoning`` output (chain of thought), then the input; a reply cut before its ``input``
    sends nothing (unreadable). The input comes in the plain format, in a fenced block: inside a
    JSON string small models lose the quotes and newlines an input needs."""

    plain_kinds = {"input": "code"}

    def __init__(self, reasoning: bool = False) -> None:
        super().__init__(with_reasoning(AttackJail) if reasoning else AttackJail)
        self.reasoning = reasoning

    def inputs(self, query: AttackQuery) -> dict[str, str]:
        return {
            "jail": query.source if query.source is not None else "(hidden: you see only what it returns)",
            "earlier_tries": render_tries(query),
            "tries_left": str(query.tries_left),
        }

    def parse(self, text: str) -> str | None:
        """The input to send; None when the reply holds none."""
        value = self.field(text, "input")
        value = strip_fences(value) if "```" in value else value.strip("\n")
        return value if value.strip() else None


def pyjail_modules(game: PyJailGame, env: GameEnv) -> GameModules:
    return GameModules(PyJailSetter(game, env.pass_mark), PyJailAttacker(game.reasoning))
