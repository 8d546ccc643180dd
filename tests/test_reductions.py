"""Reductions (issue 3): results against NumPy, fusion across reductions, determinism."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import fusejit
from fusejit.lowering.loop_ir import ReduceKernel
from fusejit.lowering.memplan import check_plan

RNG = np.random.default_rng(0)

REDUCTIONS = {
    "sum": lambda x, ax, kd: x.sum(axis=ax, keepdims=kd),
    "prod": lambda x, ax, kd: np.prod(x, axis=ax, keepdims=kd),
    "max": lambda x, ax, kd: x.max(axis=ax, keepdims=kd),
    "min": lambda x, ax, kd: np.min(x, axis=ax, keepdims=kd),
    "mean": lambda x, ax, kd: x.mean(axis=ax, keepdims=kd),
    "var": lambda x, ax, kd: np.var(x, axis=ax, keepdims=kd, ddof=1),
    "std": lambda x, ax, kd: x.std(axis=ax, keepdims=kd),
    "any": lambda x, ax, kd: np.any(x > 0, axis=ax, keepdims=kd),
    "all": lambda x, ax, kd: (x > -1).all(axis=ax, keepdims=kd),
    "ptp": lambda x, ax, kd: np.ptp(x, axis=ax, keepdims=kd),
    "nansum": lambda x, ax, kd: np.nansum(x, axis=ax, keepdims=kd),
    "nanmax": lambda x, ax, kd: np.nanmax(x, axis=ax, keepdims=kd),
    "add.reduce": lambda x, ax, kd: np.add.reduce(x, axis=ax, keepdims=kd),
}


def assert_like_numpy(got, exp) -> None:
    assert type(got) is type(exp)
    assert np.asarray(got).dtype == np.asarray(exp).dtype
    assert np.shape(got) == np.shape(exp)
    if np.asarray(exp).dtype.kind == "f":
        rtol = 1e-5 if np.asarray(exp).dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, exp, rtol=rtol, atol=1e-6, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, exp)


def _bind(f, axis, keepdims):
    """A one-argument function (axis and keepdims closed over, not traced arguments)."""
    return lambda x: f(x, axis, keepdims)


def _call_both(f, x):
    try:
        exp = f(x)
    except Exception as e:  # noqa: BLE001 - the compiled function must raise the same type
        with pytest.raises(type(e)):
            fusejit.jit(f)(x)
        return
    with np.errstate(all="ignore"):
        got = fusejit.jit(f)(x)
    assert_like_numpy(got, exp)


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8])
@pytest.mark.parametrize("shape,axis", [((), None), ((7,), 0), ((3, 5), 1), ((3, 5), None),
                                        ((4, 0), 0), ((4, 0), 1), ((2, 3, 4), (0, 2)),
                                        ((1, 6), -1)])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_reduction_matches_numpy(name, dtype, shape, axis) -> None:
    x = (RNG.standard_normal(shape) * 3).astype(dtype)
    for keepdims in (False, True):
        _call_both(_bind(REDUCTIONS[name], axis, keepdims), x)


@pytest.mark.parametrize("fn", [np.argmax, np.argmin])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_arg_reductions_first_occurrence_and_nan(fn, axis) -> None:
    x = np.array([[1.0, 3.0, 3.0, -2.0], [np.nan, 5.0, np.nan, 5.0], [0.0, 0.0, -1.0, -1.0]])
    _call_both(lambda x: fn(x, axis=axis), x)
    _call_both(lambda x: fn(x, axis=axis), x.astype(np.int16))


def test_reductions_of_non_contiguous_inputs() -> None:
    x = RNG.standard_normal((6, 8)).astype(np.float32)[::2, ::-3]
    for f in REDUCTIONS.values():
        for axis in (None, 0, 1):
            _call_both(_bind(f, axis, False), x)


def test_empty_reduction_errors_like_numpy() -> None:
    x = np.zeros((3, 0), np.float32)
    _call_both(lambda x: x.max(axis=1), x)
    _call_both(lambda x: np.argmin(x), x)
    _call_both(lambda x: x.sum(axis=1), x)


def test_axis_errors_like_numpy() -> None:
    with pytest.raises(np.exceptions.AxisError):
        fusejit.jit(lambda x: x.sum(axis=2))(np.ones((2, 2)))


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def layernorm(x, g, b):
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * g + b


def l2(x, y):
    return np.sum((x - y) ** 2)


@pytest.mark.parametrize("fn,args", [
    (softmax, lambda: [RNG.standard_normal((33, 70)).astype(np.float32)]),
    (layernorm, lambda: [RNG.standard_normal((9, 130)).astype(np.float32),
                         RNG.standard_normal(130).astype(np.float32),
                         RNG.standard_normal(130).astype(np.float32)]),
    (l2, lambda: [RNG.standard_normal(5000).astype(np.float32),
                  RNG.standard_normal(5000).astype(np.float32)]),
])
def test_row_programs_are_one_kernel_and_match(fn, args) -> None:
    xs = args()
    jf = fusejit.jit(fn)
    assert_like_numpy(jf(*xs), fn(*xs))
    program = jf.lower_for(*xs).program
    check_plan(program)
    assert len(program.kernels) == 1
    kernel = program.kernels[0]
    assert isinstance(kernel, ReduceKernel)
    if fn is not l2:
        assert len(kernel.phases) == 3


def _computes(kernel: ReduceKernel, op: str) -> int:
    return sum(1 for phase in kernel.phases for s in phase
               if getattr(s, "op", None) == op and hasattr(s, "args"))


def test_softmax_stores_exp_once_and_scales_in_place() -> None:
    """Store-then-scale: exp runs once per element; the row of e waits in the output."""
    x = RNG.standard_normal((17, 300)).astype(np.float32)
    jf = fusejit.jit(softmax)
    assert_like_numpy(jf(x), softmax(x))
    program = jf.lower_for(x).program
    kernel = program.kernels[0]
    assert _computes(kernel, "exp") == 1
    # max and sum are used only inside the kernel: no buffer, nothing stored for them
    assert not program.by_kind("temp") and program.arena_bytes == 0


def test_reduction_read_by_another_kernel_is_stored() -> None:
    def f(x):
        m = x.max(axis=1, keepdims=True)
        return np.exp(x - m), m.T @ np.ones((17, 3), np.float32)

    x = RNG.standard_normal((17, 40)).astype(np.float32)
    jf = fusejit.jit(f)
    for g, w in zip(jf(x), f(x)):
        assert_like_numpy(g, w)
    program = jf.lower_for(x).program
    assert len(program.kernels) >= 2


def two_uses(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    s = e.sum(axis=1, keepdims=True)
    p = e / s
    t = (p * e).sum(axis=1, keepdims=True)  # needs p: a phase after p's
    return p, e * t, np.tanh(e) - s  # e needed again after p's row overwrote it


def test_stashed_operand_is_recomputed_after_its_row_is_overwritten() -> None:
    x = RNG.standard_normal((5, 64)).astype(np.float32)
    jf = fusejit.jit(two_uses)
    got, want = jf(x), two_uses(x)
    for g, w in zip(got, want):
        assert_like_numpy(g, w)
    check_plan(jf.lower_for(x).program)


def test_float32_sum_is_deterministic_and_accurate() -> None:
    x = RNG.standard_normal(1 << 20).astype(np.float32) + np.float32(1000)
    f = fusejit.jit(lambda x: x.sum())
    first = f(x)
    assert all(f(x).tobytes() == first.tobytes() for _ in range(5))
    exact = np.sum(x.astype(np.float64))
    assert abs(float(first) - exact) <= abs(float(np.sum(x)) - exact) + abs(exact) * 2 ** -24


def test_float64_sum_is_pairwise_accurate() -> None:
    x = RNG.uniform(0, 1, 1 << 21)
    got = fusejit.jit(lambda x: x.sum())(x)
    exact = float(np.sum(x.astype(np.longdouble)))
    assert abs(got - exact) <= 4 * abs(float(np.sum(x)) - exact) + 1e-9


def test_sum_dtypes_follow_numpy() -> None:
    for dtype in (np.int8, np.int32, np.uint16, np.bool_):
        x = np.arange(10).astype(dtype)
        _call_both(lambda x: x.sum(), x)
        _call_both(lambda x: x.mean(), x)


@pytest.mark.parametrize("view", [
    lambda x: np.expand_dims(x, (0, -1)) * 2,
    lambda x: np.squeeze(x[:, :1]) + 1,
    lambda x: x[None].squeeze(0) - 1,
    lambda x: np.swapaxes(x, 0, 1) * x.T,
    lambda x: np.moveaxis(x[..., None], -1, 0) + 1,
    lambda x: x.swapaxes(1, 0).sum(axis=0, keepdims=True),
])
def test_views_as_index_maps(view) -> None:
    x = RNG.standard_normal((4, 5)).astype(np.float32)
    _call_both(view, x)


def test_squeeze_of_non_unit_axis_raises_like_numpy() -> None:
    _call_both(lambda x: np.squeeze(x, 0), np.ones((2, 3)))


@pytest.mark.c_only  # the CPU's threads (OMP_NUM_THREADS), in a subprocess
def test_split_full_reductions_do_not_depend_on_thread_count(tmp_path) -> None:
    """Full reductions are split into a number of parts fixed by the size alone, so one
    thread and two threads give bit-identical results."""
    import os
    import subprocess
    import sys

    script = (
        "import numpy as np, fusejit\n"
        "rng = np.random.default_rng(3)\n"
        "x = rng.standard_normal((1 << 20) + 5).astype(np.float32) * 100\n"
        "f = fusejit.jit(lambda x: (np.sum(x * x), x.max(), x.mean(), np.any(x > 300)))\n"
        "print(repr(tuple(v.tobytes() for v in f(x))))\n")
    outs = []
    for threads in ("1", "2"):
        env = dict(os.environ, OMP_NUM_THREADS=threads, FUSEJIT_CACHE_DIR=str(tmp_path))
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr
        outs.append(proc.stdout)
    assert outs[0] == outs[1]
    x = np.random.default_rng(3).standard_normal((1 << 20) + 5).astype(np.float32) * 100
    f = fusejit.jit(lambda x: np.sum(x * x))
    kernel = f.lower_for(x).program.kernels[0]
    assert isinstance(kernel, ReduceKernel) and "_fin(" in f.lower_for(x).source
    np.testing.assert_allclose(f(x), np.sum(x.astype(np.float64) ** 2), rtol=1e-6)


# --- scipy.special.logsumexp ------------------------------------------------------------------


def _lse_cases():
    x = RNG.standard_normal((5, 7)) * 50
    y = x.copy()
    y[0] = -np.inf
    y[1, 2] = np.inf
    y[2, 3] = np.nan
    y[3] = 7.0  # ties of the maximum
    return x, y


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.bool_])
@pytest.mark.parametrize("axis, keepdims", [(None, False), (1, False), (-1, True), (0, False),
                                            ((0, 1), True)])
def test_logsumexp_matches_scipy(dtype, axis, keepdims) -> None:
    import scipy.special as sp

    x, y = _lse_cases()
    for a in (x, y) if dtype != np.bool_ else (x > 0,):
        a = a.astype(dtype) if dtype in (np.float64, np.float32) else (
            a if dtype == np.bool_ else np.nan_to_num(a, posinf=9, neginf=-9).astype(dtype))
        f = _bind(lambda v, ax, kd: sp.logsumexp(v, axis=ax, keepdims=kd), axis, keepdims)
        _call_both(f, a)


def test_logsumexp_edge_shapes_and_fusion() -> None:
    import scipy.special as sp

    x, _ = _lse_cases()
    for f in (lambda x: sp.logsumexp(x[0, 0]), lambda x: sp.logsumexp(x[0, 0], keepdims=True),
              lambda x: sp.logsumexp(x[:0], axis=1), lambda x: sp.logsumexp(x[:, :0], axis=1),
              lambda x: sp.logsumexp(x.T[::2], axis=0)):
        _call_both(f, x)
    c = fusejit.jit(lambda x: sp.logsumexp(x, axis=1)).lower_for(x)
    assert [type(k) for k in c.program.kernels] == [ReduceKernel]  # one pass structure per row
    with pytest.raises(fusejit.UnsupportedError, match="complex"):
        fusejit.jit(lambda x: sp.logsumexp(x + 0j, axis=1))(x)
    assert sp.logsumexp(np.zeros(4)) == pytest.approx(np.log(4))  # SciPy's path unchanged


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_logsumexp_weights_and_sign() -> None:
    """b= (traced or constant, broadcast, a Python scalar promoting weakly, zeros that drop
    their terms even where a is inf or NaN, negative weights: NaN, or the sign with
    return_sign) and return_sign=, against SciPy."""
    import scipy.special as sp

    x, y = _lse_cases()
    w = RNG.standard_normal((5, 7))
    w[4, :3] = 0.0
    y[4, :3] = [np.inf, np.nan, -np.inf]  # weighted by zero: no effect
    w[3] = np.abs(w[3])
    z = np.zeros((5, 7))
    cases = [
        lambda a, b: sp.logsumexp(a, axis=1, b=b),
        lambda a, b: sp.logsumexp(a, axis=1, b=b, return_sign=True),
        lambda a, b: sp.logsumexp(a, b=b, return_sign=True),
        lambda a, b: sp.logsumexp(a, axis=0, b=b[0], keepdims=True),  # b broadcast
        lambda a, b: sp.logsumexp(a, axis=1, b=2.0),
        lambda a, b: sp.logsumexp(a, axis=(0, 1), b=np.abs(b), return_sign=True),
        lambda a, b: sp.logsumexp(a, axis=1, return_sign=True),
        lambda a, b: sp.logsumexp(a[:, :0], axis=1, b=b[:, :0], return_sign=True),
        lambda a, b: sp.logsumexp(a[0, 0], b=b[0, 0], return_sign=True),
    ]
    for f in cases:
        for a, b in ((x, w), (y, w), (x, z), (y.astype(np.float32), w.astype(np.float32)),
                     (np.nan_to_num(y, posinf=9, neginf=-9).astype(np.int32), w)):
            want = f(a, b)
            for got in (fusejit.jit(f)(a, b), fusejit.jit(lambda a, f=f, b=b: f(a, b))(a)):
                for g, e in zip(got if isinstance(got, tuple) else (got,),
                                want if isinstance(want, tuple) else (want,)):
                    assert_like_numpy(g, e)
    b32 = np.array([1.0, 2.0, -0.5], np.float32)  # a Python scalar `a`: weak, as SciPy's
    for f in (lambda b: sp.logsumexp(2.0, b=b), lambda b: sp.logsumexp(np.float64(2.0), b=b),
              lambda b: sp.logsumexp(3, b=b, return_sign=True)):
        want, got = f(b32), fusejit.jit(f)(b32)
        for g, e in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            assert_like_numpy(g, e)


def test_logsumexp_imported_after_fusejit() -> None:
    """`from scipy.special import logsumexp` after `import fusejit` gets the traced version."""
    import os
    import subprocess
    import sys

    code = ("import fusejit, numpy as np\nfrom scipy.special import logsumexp\n"
            "x = np.arange(6.0).reshape(2, 3)\n"
            "assert np.allclose(fusejit.jit(lambda x: logsumexp(x, axis=1))(x), "
            "logsumexp(x, axis=1))\nprint('ok')")
    from conftest import subprocess_env

    env = subprocess_env()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's all-NaN slice warnings
def test_nan_reductions_and_ptp_are_there() -> None:
    x = RNG.standard_normal((4, 5))
    x[1, 2] = np.nan
    x[3] = np.nan
    for f in (lambda x: np.nansum(x, axis=1), lambda x: np.nanmax(x, axis=0),
              lambda x: np.nanmin(x, axis=1, keepdims=True), lambda x: np.nanmean(x, axis=1),
              lambda x: np.ptp(x[:2, :2], axis=0), lambda x: np.ptp(x[:2])):
        _call_both(f, x)


@pytest.mark.parametrize("fn,shape", [
    (lambda x: softmax(x)[::-1], (64, 100)),
    (lambda x: softmax(x).T + x, (30, 30)),
    (lambda x: x - x.max(axis=1), (30, 30)),
    (lambda x: x / x.sum(axis=1, keepdims=True)[::-1], (20, 7)),
    (lambda x: x / x.sum(axis=1, keepdims=True)[0], (20, 7)),
    (lambda x: (x / x.sum(axis=1)[:, None], x.sum(axis=1)[::-1]), (8, 9)),
])
def test_reduction_read_across_rows_in_its_own_kernel(fn, shape) -> None:
    """A row kernel's reduction read at another row (reversed, transposed, broadcast along
    the other axis): the reductions and their users are lowered as separate kernels. Positive
    data from the test's own seed: a row sum near 0 would turn the last-bit difference of two
    float32 sums (fusejit's is correctly rounded, NumPy's pairwise) into any relative error,
    and the module's RNG state depends on which tests ran before (xdist)."""
    x = np.random.default_rng(329).uniform(0.25, 2.0, shape).astype(np.float32)
    got, want = fusejit.jit(fn)(x), fn(x)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        assert_like_numpy(g, w)


def test_softmax_reversed_into_its_own_input() -> None:
    def f(x):
        x[...] = softmax(x)[::-1]

    x = RNG.standard_normal((8, 9)).astype(np.float32)
    want = x.copy()
    f(want)
    fusejit.jit(f)(x)
    assert_like_numpy(x, want)


@pytest.mark.parametrize("fn", [np.argmax, np.argmin])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.uint8])
@pytest.mark.parametrize("n", [1, 31, 32, 33, 100, 4097])
def test_arg_reductions_first_occurrence_across_lanes(fn, dtype, n) -> None:
    """Rows are followed FJ_LANES points at a time, one per lane (fj_reduce.h): ties in the
    same lane and in other lanes, NaNs early and late, and the rest of a row all keep
    NumPy's first occurrence."""
    extreme = 90 if fn is np.argmax else 3
    base = np.full(n, 50, dtype)
    cases = [base.copy()]
    for pos in ([5, 37, 69, 40], [n - 1, n // 2], [0]):
        x = base.copy()
        x[[p % n for p in pos]] = extreme
        cases.append(x)
    if np.dtype(dtype).kind == "f":
        for pos in ([70, 33], [n - 1], [3, 5]):
            x = base.copy()
            x[[p % n for p in pos]] = np.nan
            x[(pos[0] + 1) % n] = extreme
            cases.append(x)
    f = fusejit.jit(lambda a: (fn(a), fn(a.reshape(1, -1), axis=1), fn(a * 2)))
    for x in cases:
        got = f(x)
        assert [int(np.asarray(g).ravel()[0]) for g in got] == [
            int(fn(x)), int(fn(x.reshape(1, -1), axis=1)[0]), int(fn(x * 2))]


@pytest.mark.parametrize("fn", [np.max, np.min])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("n", [1, 31, 32, 33, 100, 4097, 1 << 17])
def test_float_max_min_across_lanes(fn, dtype, n) -> None:
    """Float max/min fold FJ_LANES accumulators (creduce): NaNs in any lane or in the rest
    of a row, infinities, extremes early and late all give NumPy's value, over a whole array
    (split into parts from 2^17 points) and along rows."""
    rng = np.random.default_rng(n)
    base = rng.standard_normal(n).astype(dtype)
    cases = [base, np.full(n, -np.inf if fn is np.max else np.inf, dtype)]
    for pos in ([0], [n - 1], [n // 2, 37], [33, 70]):
        for v in (np.nan, np.inf, -np.inf, 1e4):
            x = base.copy()
            x[[p % n for p in pos]] = v
            cases.append(x)
    g = lambda a: (fn(a), fn(a.reshape(1, -1), axis=1))
    f = fusejit.jit(g)
    for x in cases:
        got, want = f(x), g(x)
        assert_like_numpy(got[0], want[0])
        assert_like_numpy(got[1], want[1])


def test_logsumexp_wrapper_traces_with_the_tracers_own_copy(monkeypatch) -> None:
    """pytest can import the repository root a second time under another package name; the
    wrapper SciPy holds belongs to whichever copy patched it first, and must hand each Tracer
    to the copy that made it."""
    import types

    import scipy.special as sp

    other = types.ModuleType("othercopy.scipy_api")
    other.logsumexp = lambda a, axis=None, b=None, keepdims=False, return_sign=False: (
        "other copy", axis)  # (the wrapper forwards the call's own arguments)
    tracer_mod = types.ModuleType("othercopy.tracer")
    fake = type("Tracer", (), {"__fusejit_tracer__": True, "__module__": "othercopy.tracer"})
    tracer_mod.Tracer = fake
    monkeypatch.setitem(sys.modules, "othercopy.scipy_api", other)
    monkeypatch.setitem(sys.modules, "othercopy.tracer", tracer_mod)
    assert sp.logsumexp(fake(), axis=1) == ("other copy", 1)
    assert sp.logsumexp(np.zeros(3)) == pytest.approx(np.log(3))  # arrays: SciPy's own


def test_complex_variance_with_where_and_nan_functions_keywords() -> None:
    """A complex variance is of the moduli (NumPy's x * conj(x)), with where= and in
    np.nanvar too; the nan-functions' out=/initial=/where= are refused, never ignored."""
    from conftest import run_both

    x = np.linspace(-1, 2, 7)
    z = x + 1j * x[::-1]
    zn = z.copy()
    zn[2] = np.nan
    run_both(lambda z: (np.var(z, where=z.real > 0), np.std(z, where=z.real > 0, ddof=1),
                        np.var(z.astype(np.complex64), where=z.real > 0)), z)
    run_both(lambda z: (np.nanvar(z), np.nanstd(z, ddof=1), np.nanvar(z.astype(np.complex64))),
             zn)
    for f in (lambda a: np.nanmax(a, initial=50.0), lambda a: np.nanmin(a, where=a > 0),
              lambda a: np.nanmean(a, where=a > 0)):
        with pytest.raises(fusejit.UnsupportedError, match="out=/initial=/where="):
            fusejit.jit(f)(x)


def test_zero_d_takes_axis_0_as_numpys_ufunc_reductions_do() -> None:
    """NumPy's legacy rule: a 0-d array's ufunc reductions take axis 0 or -1 (np.mean and
    tuples of axes do not)."""
    from conftest import run_both

    a = np.array(2.0)
    for f in (lambda a: np.sum(a, axis=0), lambda a: np.max(a, axis=-1),
              lambda a: np.argmax(a, axis=0), lambda a: np.any(a, axis=0),
              lambda a: (a * 2).sum(0), lambda a: np.prod(a, axis=(0,)),
              lambda a: np.mean(a, axis=0), lambda a: np.sum(a, axis=1)):
        run_both(f, a)
