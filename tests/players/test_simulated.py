"""The simulated players' memos: bounded, and the same values as the function they keep."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from skate.games.cop.difficulty import code_difficulty
from skate.players.simulated import Memo


def test_a_memo_keeps_the_most_recent_keys_and_computes_again_what_left():
    calls: list[int] = []

    def square(x: int) -> int:
        calls.append(x)
        return x * x

    memo = Memo(square, size=3)
    assert [memo(x) for x in (1, 2, 1, 3, 4)] == [1, 4, 1, 9, 16]
    assert calls == [1, 2, 3, 4] and len(memo) == 3  # 1 was read again; 2, least recent, left
    assert memo(1) == 1 and memo(2) == 4
    assert calls == [1, 2, 3, 4, 2]


def test_a_memo_read_from_many_threads_gives_each_key_its_own_value():
    texts = [f"x = {k}\nfor i in range({k % 7}):\n    x += i\nprint(x)\n" for k in range(300)]
    memo = Memo(code_difficulty, size=64)
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(memo, texts * 4))
    assert got == [code_difficulty(t) for t in texts] * 4
    assert len(memo) == 64
