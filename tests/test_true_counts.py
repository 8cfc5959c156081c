"""Sums of bools (np.count_nonzero, (x > t).sum(), a Game of Life's live cells): the true
lanes of each bool vector added by popcount, at the bools' width. Exact against NumPy for
every length around the vector widths (the scalar tail), along axes, in narrow result
dtypes that wrap as NumPy's do, on AVX-512 and AVX2."""
import numpy as np
import pytest

import cppcodegen


def counts(x, m):
    return (np.count_nonzero(m), (x > 0.25).sum(), np.sum((x < 0) & m),
            np.count_nonzero(m[1:] != m[:-1]), (x > 0).sum(axis=-1))


def narrow(m):
    return np.sum(m, dtype=np.uint8), np.sum(m, dtype=np.int16), m.sum(axis=0)


def life_count(board, steps):
    alive = np.zeros(steps, dtype=np.int64)
    for t in range(steps):
        nb = np.zeros(board.shape, dtype=np.uint8)
        nb[1:, :] += board[:-1, :]
        nb[:-1, :] += board[1:, :]
        nb[:, 1:] += board[:, :-1]
        nb[:, :-1] += board[:, 1:]
        nb[1:, 1:] += board[:-1, :-1]
        nb[1:, :-1] += board[:-1, 1:]
        nb[:-1, 1:] += board[1:, :-1]
        nb[:-1, :-1] += board[1:, 1:]
        board = (nb == 3) | (board & (nb == 2))
        alive[t] = np.count_nonzero(board)
    return board, alive


def _same(got, want):
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("isa", ["native", "avx2"])
def test_counts_at_every_tail(isa):
    rng = np.random.default_rng(7)
    f = cppcodegen.compile(counts, isa=isa)
    g = cppcodegen.compile(narrow, isa=isa)
    for n in (1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 1000, 4099):
        x = rng.standard_normal((3, n))
        m = rng.random((3, n)) < 0.6
        _same(f(x, m), counts(x, m))
        big = np.ones((2, n), bool)         # (uint8 sums wrap past 255)
        _same(g(big), narrow(big))
    assert ".count();" in cppcodegen.explain(counts, x, m).source


def test_game_of_life_counts():
    b = np.random.default_rng(0).random((70, 45)) < 0.3
    _same(cppcodegen.compile(life_count)(b, 6), life_count(b, 6))
