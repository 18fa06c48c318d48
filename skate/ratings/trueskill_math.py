"""One TrueSkill two-player update in closed form, bit for bit what the ``trueskill`` library
computes, about 20 times faster.

``trueskill.rate_1vs1`` builds a factor graph for every match (prior, likelihood, team sum,
team difference, truncation) and passes Gaussian messages through it. For two players the
schedule is fixed, so :func:`rate_1vs1` performs the same floating-point operations in the same
order, in (precision, precision × mean) form as the library holds them, without the graph's
objects: the prior with the dynamics factor τ added, the performance likelihood (β²), the
difference of the two performances, the truncation (V and W of the win or draw case, at the
draw margin) repeated until its message moves less than the library's ``min_delta``, and the
messages back up to each rating. The library's own error function and constants are used, so
results are identical to the last bit (``tests/ratings/test_trueskill_math.py`` checks every
update of whole games and random inputs against the library, which stays the reference).

A rating here is its (μ, σ) pair as a ``trueskill.Rating`` reports it: the library stores a
rating as (π, τ) and gives μ = τ/π, σ = √(1/π), so a pair passed in is used as those reported
values and the pair returned is what ``Rating(μ, σ)`` of the new values reports (:func:`reported`).
"""

from __future__ import annotations

import math
import warnings

with warnings.catch_warnings():  # trueskill 0.4.5 has an invalid escape in a docstring
    warnings.simplefilter("ignore", SyntaxWarning)
    import trueskill
    from trueskill.backends import erfc, ppf

MIN_DELTA = trueskill.DELTA  # the library's convergence threshold for the truncation loop
_SQRT2 = math.sqrt(2)
_PDF_C = 1 / math.sqrt(2 * math.pi) * 1  # the library's pdf constant (times |σ| = 1)
_sqrt, _exp, _INF = math.sqrt, math.exp, math.inf


def _pi1(x: float) -> float:
    """A one-term sum factor's precision, 1 / (1 / x); the library reads 1 / 0 as infinity."""
    return 1.0 / (1 / x) if x else 0.0


def _pi2(x: float, y: float) -> float:
    """A two-term sum factor's precision, 1 / (1/x + 1/y), zeros read as the library reads them."""
    return 1.0 / (1 / x + 1 / y) if x and y else 0.0


def reported(mu: float, sigma: float) -> tuple[float, float]:
    """(μ, σ) as ``trueskill.Rating(mu, sigma)`` reports them (through its π, τ form)."""
    pi = sigma**-2
    tau = pi * mu
    return (pi and tau / pi), (math.sqrt(1 / pi) if pi else math.inf)


def draw_margin(draw_probability: float, beta: float) -> float:
    """The library's draw margin for two players (``trueskill.calc_draw_margin``, same expression)."""
    return ppf((draw_probability + 1) / 2.0) * math.sqrt(2) * beta


def _floating_point_error() -> FloatingPointError:
    return FloatingPointError('Cannot calculate correctly, set backend to "mpmath"')  # the library's words


def rate_1vs1(
    mu_w: float, sigma_w: float, mu_l: float, sigma_l: float, drawn: bool, beta: float, tau: float, margin: float
) -> tuple[float, float, float, float]:
    """New (μ, σ) of the winner and the loser (of the first and second player when ``drawn``),
    as ``trueskill.rate_1vs1(Rating(mu_w, sigma_w), Rating(mu_l, sigma_l), drawn)`` in an
    environment with this β and τ and draw margin ``margin`` (:func:`draw_margin`) gives them.
    Raises FloatingPointError where the library does (an upset too large for float precision)."""
    beta2 = beta**2
    vpi0, vtau0, ppi0, ptau0, tpi0, ttau0 = _down(mu_w, sigma_w, tau, beta2)
    vpi1, vtau1, ppi1, ptau1, tpi1, ttau1 = _down(mu_l, sigma_l, tau, beta2)
    # The difference of the two performances: its sum-factor message (sp, st).
    m1 = ttau1 / tpi1 if tpi1 else tpi1
    mu = (ttau0 / tpi0 if tpi0 else tpi0) + -1 * m1
    sp = _pi2(tpi0, tpi1)
    st = sp * mu
    dp, dt = sp, st  # the difference variable
    mp, mt = 0.0, 0.0  # the truncation factor's message to it
    for i in range(10):
        if i:  # the sum factor sends the same message again: the variable is re-divided and re-multiplied
            dp, dt = (dp - sp) + sp, (dt - st) + st
        cp, ct = dp - mp, dt - mt
        sqrt_pi = _sqrt(cp)
        diff, m = ct / sqrt_pi, margin * sqrt_pi
        # The library's V and W of the truncated Gaussian, with its cdf and pdf (inlined).
        if drawn:
            abs_diff = abs(diff)
            lo, hi = m - abs_diff, -m - abs_diff
            denom = 0.5 * erfc(-lo / _SQRT2) - 0.5 * erfc(-hi / _SQRT2)
            if not denom:
                raise _floating_point_error()
            pdf_lo, pdf_hi = _PDF_C * _exp(-(lo**2 / 2)), _PDF_C * _exp(-(hi**2 / 2))
            ratio = (pdf_hi - pdf_lo) / denom
            v = ratio * (-1 if diff < 0 else +1)
            w = (ratio**2) + (lo * pdf_lo - hi * pdf_hi) / denom
        else:
            x = diff - m
            denom = 0.5 * erfc(-x / _SQRT2)
            v = (_PDF_C * _exp(-(x**2 / 2)) / denom) if denom else -x
            w = v * (v + x)
            if not 0 < w < 1:
                raise _floating_point_error()
        den = 1.0 - w
        npi, ntau = cp / den, (ct + sqrt_pi * v) / den
        pi_delta = abs(dp - npi)
        delta = 0.0 if pi_delta == _INF else max(abs(dt - ntau), _sqrt(pi_delta))
        mp, mt = (npi + mp) - dp, (ntau + mt) - dt
        dp, dt = npi, ntau
        if delta <= MIN_DELTA:
            break
    # Up: the difference to the first team, then to the second.
    ap, at = dp - sp, dt - st
    mu = (at / ap if ap else ap) + 1.0 * (ttau1 / tpi1 if tpi1 else tpi1)
    u0p = _pi2(ap, tpi1)
    u0t = u0p * mu
    n0p, n0t = tpi0 + u0p, ttau0 + u0t
    bp, bt = n0p - u0p, n0t - u0t
    mu = (bt / bp if bp else bp) + -1.0 * (at / ap if ap else ap)
    u1p = _pi2(bp, ap)
    u1t = u1p * mu
    n1p, n1t = tpi1 + u1p, ttau1 + u1t
    # Up: team performance to performance, likelihood to rating; for each player.
    mu_0, sigma_0 = _rating_up(n0p, n0t, tpi0, ttau0, ppi0, ptau0, vpi0, vtau0, beta2)
    mu_1, sigma_1 = _rating_up(n1p, n1t, tpi1, ttau1, ppi1, ptau1, vpi1, vtau1, beta2)
    return mu_0, sigma_0, mu_1, sigma_1


def _down(mu: float, sigma: float, tau: float, beta2: float) -> tuple[float, float, float, float, float, float]:
    """One player's messages down the graph: the prior with τ added (its π, τ), the performance
    after the likelihood (β²), and the one-player team's performance."""
    s = _sqrt(sigma**2 + tau**2)
    vpi = s**-2
    vtau = vpi * mu
    a = 1.0 / (1.0 + beta2 * vpi)
    ppi, ptau = a * vpi, a * vtau
    tpi = _pi1(ppi)
    return vpi, vtau, ppi, ptau, tpi, tpi * (ptau / ppi)


def _rating_up(
    np_: float, nt: float, tpi: float, ttau: float, ppi: float, ptau: float, vpi: float, vtau: float, beta2: float
) -> tuple[float, float]:
    dvp, dvt = np_ - tpi, nt - ttau
    mu = dvt / dvp if dvp else dvp
    xp = _pi1(dvp)
    xt = xp * mu
    mgp, mgt = (ppi + xp) - ppi, (ptau + xt) - ptau
    a = 1.0 / (1.0 + beta2 * mgp)
    rp, rt = vpi + a * mgp, vtau + a * mgt
    # The new Rating(μ, σ), and what it reports (see reported)
    mu, sigma = float(rt / rp if rp else rp), float(_sqrt(1 / rp) if rp else _INF)
    pi = sigma**-2
    tau = pi * mu
    return (pi and tau / pi), (_sqrt(1 / pi) if pi else _INF)
