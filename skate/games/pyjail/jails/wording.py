"""The pools PyJail jails are written from: names, messages and flavour text.

Names of constants, functions, classes and locals, refusal messages, docstrings, titles, themes
and stories: :class:`~skate.games.pyjail.jails.writer._Writer` draws every surface detail of a
jail from them, and :mod:`~skate.games.pyjail.jails.reader` knows the name pools it reads back.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# ---------------------------------------------------------------------------
# The pools jails are written from
# ---------------------------------------------------------------------------

# Names of the constants that state the rules (one pool per role; the reader knows them all).
_WORDS_CONST = (
    "BANNED",
    "BLOCKLIST",
    "FORBIDDEN",
    "BAD_WORDS",
    "DENYLIST",
    "BANNED_WORDS",
    "FORBIDDEN_WORDS",
    "BLOCKED_WORDS",
    "NAUGHTY_WORDS",
    "STOPWORDS",
    "TABOO",
    "DISALLOWED",
)
_CHARS_CONST = (
    "BANNED_CHARS",
    "BAD_CHARS",
    "FORBIDDEN_CHARS",
    "BLOCKED_CHARS",
    "ILLEGAL_CHARS",
    "DENIED_CHARS",
    "BANNED_SYMBOLS",
    "FORBIDDEN_SYMBOLS",
    "TABOO_CHARS",
)
_LEN_CONST = (
    "MAX_LEN",
    "MAX_LENGTH",
    "LIMIT",
    "MAX_CHARS",
    "BUDGET",
    "MAX_INPUT",
    "CHAR_LIMIT",
    "LENGTH_LIMIT",
    "MAX_SIZE",
    "CAP",
)
_NODES_CONST = (
    "BANNED_NODES",
    "FORBIDDEN_NODES",
    "BLOCKED_NODES",
    "DENIED_NODES",
    "ILLEGAL_NODES",
    "BAD_NODES",
    "FORBIDDEN_SYNTAX",
    "BANNED_SYNTAX",
)
_NAMES_CONST = (
    "BANNED_NAMES",
    "FORBIDDEN_NAMES",
    "BLOCKED_NAMES",
    "DENIED_NAMES",
    "BAD_NAMES",
    "ILLEGAL_NAMES",
    "FORBIDDEN_IDENTIFIERS",
    "TABOO_NAMES",
)
_STRS_CONST = ("ALLOW_STRINGS", "ALLOW_STR_LITERALS", "STRINGS_OK", "PERMIT_STRINGS", "ALLOW_TEXT_LITERALS")
_SAFE_CONST = ("SAFE_BUILTINS", "ALLOWED_BUILTINS", "PERMITTED_BUILTINS", "TOOLBOX", "SAFE_NAMES", "KEPT_BUILTINS")

# Names of the functions and classes a jail may define next to ``jail`` (the reader knows them).
_HELPERS = (
    "redact",
    "censor",
    "scrub",
    "hide_flag",
    "sanitize",
    "mask_flag",
    "strip_secret",
    "launder",
    "clean_output",
    "bleep",
    "conceal",
)
"""The censoring function: it reads the flag and cuts it out of a text."""
_REFUSE_FUNCS = ("refuse", "deny", "reject", "bounce", "turn_away", "say_no")
_BANNER_FUNCS = ("banner", "motd", "greeting", "welcome", "title_card")
_CHECK_FUNCS = {
    "len": ("too_long", "over_limit", "exceeds_limit", "is_too_long", "over_budget", "check_length"),
    "ascii": ("not_ascii", "has_unicode", "check_ascii"),
    "words": (
        "has_banned_word",
        "mentions_forbidden",
        "contains_bad_word",
        "bad_word_in",
        "uses_banned_word",
        "check_words",
    ),
    "chars": (
        "has_bad_char",
        "uses_forbidden_char",
        "bad_chars_in",
        "contains_banned_char",
        "has_illegal_symbol",
        "check_chars",
    ),
    "ast": ("audit", "check_tree", "scan_tree", "find_violation", "vet_tree", "inspect_tree"),
}
_VALIDATORS = ("validate", "screen", "examine", "vet", "gatekeep", "first_problem", "check_input", "inspect")
_RUN_FUNCS = ("execute", "run_code", "evaluate", "perform", "sandboxed", "run_attempt")
_GUARD_CLASSES = (
    "Guard",
    "Warden",
    "Gatekeeper",
    "Bouncer",
    "Inspector",
    "Checkpoint",
    "Sentry",
    "Turnstile",
    "Customs",
    "Doorman",
)
_EXC_CLASSES = ("Rejected", "Denied", "Violation", "Refused", "Blocked", "NotAllowed", "Caught")

# Local names.
_CODE_VARS = (
    "code",
    "src",
    "payload",
    "expr",
    "text",
    "cmd",
    "attempt",
    "entry",
    "submission",
    "candidate",
    "snippet",
    "program",
    "query",
)
_OUT_VARS = ("out", "sink", "buf", "captured", "stdout_buf", "capture", "spool")
_ERR_VARS = ("err", "errbuf", "noise", "stderr_buf", "swallowed", "trash")
_RES_VARS = ("result", "value", "res", "answer", "outcome", "ret")
_EXC_VARS = ("exc", "e", "error", "boom", "oops", "failure")
_WHY_VARS = ("why", "reason", "problem", "verdict", "complaint", "issue", "msg")
_TREE_VARS = ("tree", "parsed", "syntax", "module", "ast_tree", "node_tree")
_NODE_VARS = ("node", "n", "part", "piece", "child", "item", "sub")
_WORD_VARS = ("word", "w", "bad", "needle", "term", "token")
_CHAR_VARS = ("ch", "c", "char", "symbol", "letter")
_ENV_VARS = ("env", "namespace", "scope", "ns", "sandbox_globals", "context")
_LOWER_VARS = ("lowered", "folded", "haystack", "low", "normalized")
_HITS_VARS = ("hits", "found", "matches", "offenders", "caught")
_SIZE_VARS = ("size", "n_chars", "length", "count")
_PARAM_VARS = ("text", "source", "s", "data", "raw", "attempt_text")
_GUARD_VARS = ("guard", "warden", "checker", "gate", "bouncer", "officer")
_SHOWN_VARS = ("shown", "reply", "report", "transcript", "response")
_SECRET_VARS = ("secret", "flag", "hidden", "the_flag", "needle_flag")
_RULE_VARS = ("rule", "test", "step", "check_fn", "gate_fn")
_PRINTED_VARS = ("printed", "stdout_text", "chatter", "output")

# Wording.
_MSG_LONG = (
    "too long",
    "Input too long.",
    "nope: too long",
    "Keep it short.",
    "That is way too long.",
    "Length limit exceeded.",
    "Too many characters.",
    "Brevity, please.",
    "Over the limit.",
    "Shorter, please.",
)
_MSG_LONG_PREFIX = ("too long", "length", "characters used", "over the limit")
_MSG_ASCII = ("ASCII only.", "plain ASCII please", "Non-ASCII input refused.")
_MSG_WORD = (
    "Blocked.",
    "Forbidden word detected.",
    "nice try",
    "Watch your language.",
    "That word is off limits.",
    "Denied: banned word.",
    "Not on my watch.",
    "Bad word.",
)
_MSG_WORD_PREFIX = (
    "blocked word",
    "forbidden",
    "not allowed",
    "banned word",
    "off-limits word",
    "taboo",
    "you may not say",
)
_MSG_CHAR = (
    "Bad characters.",
    "Character not allowed.",
    "Mind your punctuation.",
    "Forbidden symbol.",
    "Illegal character.",
    "Those characters stay outside.",
)
_MSG_CHAR_PREFIX = ("bad character", "forbidden character", "illegal symbol", "banned char", "not allowed")
_MSG_SYNTAX = (
    "syntax error",
    "That is not Python.",
    "parse error",
    "Could not parse that.",
    "Invalid syntax.",
    "Speak Python, please.",
    "Unparseable input.",
    "Gibberish.",
)
_MSG_NODE_PREFIX = ("forbidden syntax", "not allowed", "banned node", "illegal construct", "construct refused", "no")
_MSG_NAME_PREFIX = ("forbidden name", "name not allowed", "banned name", "illegal identifier", "off-limits name")
_MSG_STR = (
    "no strings",
    "String literals are not allowed.",
    "No quotes, no strings.",
    "Strings are banned.",
    "Text literals refused.",
)
_MSG_GENERIC = (
    "Refused.",
    "Rejected.",
    "Access denied.",
    "Not today.",
    "The guard says no.",
    "Input refused.",
    "Try harder.",
)
_DONE = (
    "ok",
    "done",
    "Executed.",
    "ran",
    "Done.",
    "Finished.",
    "Your code ran.",
    "Executed without incident.",
    "Nothing to report.",
    "Completed.",
    "Statement executed.",
)
_MASKS = ("[REDACTED]", "<censored>", "[CENSORED]", "<flag>", "[hidden]", "???", "*", "X", "~")
"""What the flag is replaced with; a single character is repeated to the flag's length."""
_HELPER_DOCS = (
    "Hide the flag from whatever comes back.",
    "Never show the flag.",
    "Scrub the secret out.",
    "Replace every copy of the flag.",
    "Cut the secret out of the text.",
    "Make sure the flag stays hidden.",
)
_JAIL_DOCS = (
    "Run one attempt if it passes the checks.",
    "Evaluate the input and report back.",
    "The entry point: one input, one answer.",
    "Check the input, then run it.",
    "Judge the attempt and maybe run it.",
    "Return what the attempt produced.",
)
_CHECK_DOCS = (
    "Return why the attempt is refused, or None.",
    "The first reason to refuse, if any.",
    "Check everything; report the first problem.",
    "Say what is wrong with the input.",
)
_CLASS_DOCS = (
    "Checks one attempt before it may run.",
    "Stands at the door and reads inputs.",
    "Everything the jail refuses, in one place.",
)
_RUN_DOCS = ("Run it and report back.", "Execute, capture, censor.")
_EXC_DOCS = ("Raised when an attempt breaks a rule.", "An attempt the jail refuses.", "The input was turned away.")
_TITLES = {
    "names": (
        "Word jail: some words are simply not allowed.",
        "No bad words, no flag.",
        "The blocklist jail.",
        "A jail with a vocabulary problem.",
        "{Place}, where certain words are never spoken.",
        "Mind your language in {place}.",
        "The forbidden-words jail of {place}.",
        "Speak carefully; {guard} is listening.",
    ),
    "characters": (
        "Character jail: mind your punctuation.",
        "Some characters are off limits.",
        "A jail for the character-conscious.",
        "{Place} has no use for punctuation.",
        "Every symbol is searched at the gate of {place}.",
        "The character filter of {place}.",
        "Certain keys have been pried off the keyboard.",
    ),
    "length": (
        "Short jail: keep it brief.",
        "Every character counts here.",
        "Length-limited evaluator.",
        "{Place} only has room for a few characters.",
        "Brevity is the soul of {place}.",
        "A tiny window into {place}.",
        "Short inputs only, says {guard}.",
    ),
    "ast": (
        "AST jail: your code is inspected before it runs.",
        "Syntax-checked evaluator.",
        "Only harmless syntax gets through.",
        "{Guard} parses everything you send.",
        "The syntax tree of every input is searched in {place}.",
        "A parser stands at the door of {place}.",
        "Tree inspection before execution.",
    ),
    "rewrite": (
        "Censoring jail: the flag never leaves.",
        "Output is scrubbed before you see it.",
        "Run anything; the secret is redacted.",
        "{Place} lets you run anything and shows you nothing.",
        "{Guard} reads every answer before you do.",
        "Anything goes in, nothing secret comes out.",
        "The redacting evaluator of {place}.",
    ),
}
_THEMES = (
    ("the Vault", "the vault keeper", "VAULT"),
    ("Alcatraz", "the warden", "ALCATRAZ"),
    ("the Tower", "the tower guard", "TOWER"),
    ("the Oubliette", "the jailer", "OUBLIETTE"),
    ("Fort Byte", "the sergeant", "FORT"),
    ("the Sandpit", "the lifeguard", "SANDPIT"),
    ("the Panopticon", "the watcher", "PANOPTICON"),
    ("the Glass Cage", "the keeper", "CAGE"),
    ("the Lighthouse", "the lamplighter", "LIGHTHOUSE"),
    ("the Labyrinth", "the minotaur", "LABYRINTH"),
    ("the Bastion", "the sentry", "BASTION"),
    ("the Monastery", "the abbot", "MONASTERY"),
    ("the Submarine", "the captain", "SUB"),
    ("the Observatory", "the astronomer", "OBSERVATORY"),
    ("the Greenhouse", "the gardener", "GREENHOUSE"),
    ("the Archive", "the librarian", "ARCHIVE"),
    ("the Casino", "the pit boss", "CASINO"),
    ("the Zoo", "the zookeeper", "ZOO"),
    ("the Kitchen", "the head chef", "KITCHEN"),
    ("the Museum", "the curator", "MUSEUM"),
)
_STORY = (
    "Welcome to {place}.",
    "You are locked in {place}.",
    "{Guard} reads every line you send.",
    "The flag lives in the environment and would like to leave.",
    "Nobody has escaped {place} yet.",
    "Only the worthy leave {place} with the flag.",
    "{Guard} is bored and a little paranoid.",
    "Send one line of Python and hope for the best.",
    "Escape and the flag is yours.",
    "Everything you type is judged before it runs.",
    "The walls are thin but the rules are strict.",
    "Legend says there is a way out.",
    "Good luck, you will need it.",
    "Bring a payload and a plan.",
    "The last prisoner left only a note that said almost.",
    "Rumour has it {guard} never sleeps.",
    "Your input meets a very suspicious interpreter.",
    "There is exactly one flag and it is not in this file.",
    "Think twice, type once.",
    "Prisoners who read the source do better.",
)
_RULE_TEXT = {
    "len": ("- at most {c} characters", "- inputs longer than {c} are refused", "- {c} characters, not one more"),
    "trunc": (
        "- only the first {c} characters are kept",
        "- anything past {c} characters is cut off",
        "- input is truncated to {c} characters",
    ),
    "ascii": ("- ASCII only",),
    "words": (
        "- no word from {c} may appear",
        "- the words in {c} are refused",
        "- {c} lists the words you may not use",
    ),
    "chars": (
        "- the characters in {c} are refused",
        "- no symbol from {c}",
        "- {c} lists the characters you may not type",
    ),
    "ast": (
        "- the syntax tree is inspected before it runs",
        "- forbidden constructs are found with the ast module",
        "- your code is parsed and searched first",
    ),
    "eval": ("- expressions only", "- one expression, evaluated"),
    "exec": ("- statements are fine", "- whole programs are executed"),
    "nobuiltins": ("- no builtins at all", "- the builtins have been confiscated"),
    "fewbuiltins": ("- only a handful of builtins", "- builtins are rationed"),
    "censor1": ("- the flag is cut out of the answer", "- the answer is censored"),
    "censor2": ("- printed output is captured and censored too", "- whatever you print is censored as well"),
    "censor3": ("- errors are caught and censored as well", "- exceptions are swallowed and censored"),
    "censor4": ("- stderr is captured and even SystemExit is caught", "- every exception and every stream is censored"),
}
_RULE_HEADS = ("Rules:", "House rules:", "The rules:", "Restrictions:")
_FOOTERS = (
    "Author: {handle}",
    "Category: misc",
    "Category: pyjail",
    "Points: {points}",
    "Flag format: skate{{...}}",
    "Challenge by {handle}",
)
_HANDLES = (
    "jailbird",
    "0xwarden",
    "pwnguin",
    "snakecharmer",
    "byte_bandit",
    "rootkitten",
    "null_ptr",
    "sandcastle",
    "heapster",
    "evalyn",
)
_BANNERS = (
    "=== {Place} ===",
    "*** Welcome to {place} ***",
    "--- {Place} jail ---",
    "[ {Place} ]",
    "~~ {Place} ~~",
    "{Place}: abandon hope",
)
_PROMPTS = (">>> ", "> ", "jail> ", "$ ", "input: ", "payload> ", "?> ", "your move: ")
_FILENAMES = ("<jail>", "<input>", "<user>", "<sandbox>", "<string>", "<attempt>")


def _sample(rng: np.random.Generator, pool: Sequence[str], k: int) -> list[str]:
    k = max(0, min(k, len(pool)))
    return [pool[int(i)] for i in rng.choice(len(pool), size=k, replace=False)]
