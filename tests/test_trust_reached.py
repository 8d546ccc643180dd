"""Issue 19 (no frozen values): arrays and numbers reached *through* a global — a module's
attribute (`mod.G`), an object's (`cfg.w`, SimpleNamespace, dataclass, class attribute,
`self.w` in a method), a dict's or list's item (`params["w"]`) — are read at every call, as
NumPy reads them: mutation in place, rebinding and changed numbers are all seen (a changed shape,
dtype or number traces again). See frontend/reached.py."""

from __future__ import annotations

import dataclasses
import sys
import types
import warnings

import numpy as np
import pytest
from conftest import assert_same

from fusejit import jit
from fusejit.frontend.captures import CapturedWarning

X = np.arange(4.0)


@pytest.fixture(autouse=True)
def _no_captured_warning():
    """None of these reads is frozen, so none warns."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", CapturedWarning)
        yield


def _check(jf, f, *args) -> None:
    assert_same(jf(*args), f(*args))


@pytest.fixture()
def mod(tmp_path, monkeypatch):
    """A user module holding an array, a float and a helper that reads its own global."""
    (tmp_path / "fj_reached_mod.py").write_text(
        "import numpy as np\n"
        "G = np.ones(4)\n"
        "lr = 0.5\n"
        "T = np.arange(4.0)\n"
        "def helper(x):\n"
        "    return x * T\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import fj_reached_mod

    yield fj_reached_mod
    sys.modules.pop("fj_reached_mod", None)


def test_module_attribute_array_and_float(mod) -> None:
    def f(x):
        return x * mod.G * mod.lr + mod.helper(x)

    jf = jit(f)
    _check(jf, f, X)
    mod.G[:] = 3.0  # in place
    _check(jf, f, X)
    mod.T[1] = 10.0  # a global of a helper reached through the module
    _check(jf, f, X)
    mod.G = np.full(4, 2.0)  # rebound, same shape: no retrace
    _check(jf, f, X)
    assert jf.trace_count == 1
    mod.lr = 0.25  # a number: guarded, traced again
    _check(jf, f, X)
    assert jf.trace_count == 2
    mod.G = np.ones((3, 4), np.float32)  # another shape and dtype: traced again
    _check(jf, f, X)
    assert jf.trace_count == 3


def test_simplenamespace_nested_attributes() -> None:
    cfg = types.SimpleNamespace(w=np.ones(4), lr=0.1, opt=types.SimpleNamespace(b=np.zeros(4)))

    def f(x):
        return x * cfg.w * cfg.lr + cfg.opt.b

    jf = jit(f)
    _check(jf, f, X)
    cfg.w[:] = 5.0
    _check(jf, f, X)
    cfg.opt.b = np.full(4, 2.0)
    _check(jf, f, X)
    cfg.lr = 0.7
    _check(jf, f, X)
    cfg.opt = types.SimpleNamespace(b=np.full(4, -1.0))  # an intermediate object rebound
    _check(jf, f, X)
    assert jf.trace_count == 2


class Config:
    w = np.ones(4)
    lr = 1.0


class Model:
    scale = 2.0

    def __init__(self) -> None:
        self.w = np.ones(4)
        self._b = np.zeros(4)
        self.training = True

    @property
    def b(self) -> np.ndarray:
        return self._b

    def forward(self, x):
        y = x * self.w * self.scale + self.b
        return y if self.training else y * 0.5

    def __call__(self, x):
        return self.forward(x)


@dataclasses.dataclass(frozen=True)
class Params:
    w: np.ndarray
    s: float


def test_class_attributes_and_isinstance() -> None:
    def f(x):
        assert isinstance(Model(), Model)  # a proxy of a class still checks and constructs
        return x * Config.w * Config.lr

    jf = jit(f)
    _check(jf, f, X)
    Config.w[:] = 3.0
    _check(jf, f, X)
    old = Config.w, Config.lr
    try:
        Config.w, Config.lr = np.full(4, 9.0), 2.0
        _check(jf, f, X)
        assert jf.trace_count == 2
    finally:
        Config.w, Config.lr = old


def test_instance_methods_properties_and_call() -> None:
    model = Model()

    def f(x):
        assert isinstance(model, Model)
        return model(x) + model.forward(x)

    jf = jit(f)
    _check(jf, f, X)
    model.w[:] = 7.0  # read by a method through `self`
    _check(jf, f, X)
    model._b = np.full(4, 4.0)  # read through a property
    _check(jf, f, X)
    model.training = False  # a bool deciding Python control flow: guarded
    _check(jf, f, X)
    model.scale = 3.0  # instance attribute shadowing the class attribute
    _check(jf, f, X)
    assert jf.trace_count == 3


def test_jitted_bound_method_follows_self() -> None:
    model = Model()
    jf = jit(model.forward)
    _check(jf, model.forward, X)
    model.w[:] = 2.0
    _check(jf, model.forward, X)
    model.w = np.full(4, 3.0)
    _check(jf, model.forward, X)
    assert jf.trace_count == 1


def test_frozen_dataclass() -> None:
    p = Params(np.ones(4), 2.0)

    def f(x):
        return x * p.w * p.s

    jf = jit(f)
    _check(jf, f, X)
    p.w[:] = 3.0
    _check(jf, f, X)
    object.__setattr__(p, "s", 5.0)
    _check(jf, f, X)


def test_dict_items_and_iteration() -> None:
    params = {"w": np.ones(4), "k": 2.0, "n": 3}

    def f(x):
        y = x * params["w"] * params["k"] + params["n"]
        for key, v in params.items():
            if key not in ("k", "n"):
                y = y + v
        return y

    jf = jit(f)
    _check(jf, f, X)
    params["w"][:] = 4.0
    _check(jf, f, X)
    params["w"] = np.full(4, -1.0)
    _check(jf, f, X)
    params["k"] = 3.0
    params["n"] = 5  # an int too
    _check(jf, f, X)
    params["extra"] = np.full(4, 10.0)  # a new key: traced again, seen by the loop
    _check(jf, f, X)
    del params["extra"]
    _check(jf, f, X)


def test_list_of_arrays_and_closure_dict() -> None:
    layers = [np.ones(4), np.full(4, 2.0)]

    def make():
        table = {"scale": 2.0}

        def g(x):
            for w in layers:
                x = x * w
            return x * table["scale"]

        return g, table

    g, table = make()
    jg = jit(g)
    _check(jg, g, X)
    layers[0][:] = 5.0
    _check(jg, g, X)
    layers.append(np.full(4, 3.0))  # another length: traced again
    _check(jg, g, X)
    table["scale"] = 0.5
    _check(jg, g, X)


def test_value_needed_while_tracing_is_guarded_on_contents() -> None:
    cfg = types.SimpleNamespace(mask=np.array([0.0, 1.0, 0.0, 0.0]))

    def f(x):
        return x * 2 if cfg.mask.any() else x - 1

    jf = jit(f)
    _check(jf, f, X)
    cfg.mask[:] = 0
    _check(jf, f, X)
    assert jf.trace_count == 2


def test_writing_into_a_reached_array_names_it() -> None:
    cfg = types.SimpleNamespace(w=np.ones(4))

    def f(x):
        cfg.w[:] = x
        return x

    with pytest.raises(Exception, match="'cfg.w'.*Pass it as an argument"):
        jit(f)(X)


def test_a_container_too_large_to_follow_warns() -> None:
    from fusejit.frontend.reached import MAX_ITEMS

    coeffs = [1.0] * (MAX_ITEMS + 1)

    def f(x):
        return x * coeffs[0]

    with warnings.catch_warnings():
        warnings.simplefilter("default", CapturedWarning)
        with pytest.warns(CapturedWarning, match="'coeffs'"):
            jit(f)(X)


def test_attribute_names_that_are_no_identifiers() -> None:
    cfg = types.SimpleNamespace()
    setattr(cfg, "my-w", np.ones(4))
    setattr(cfg, "class", 2.0)

    def f(x):
        return x * getattr(cfg, "my-w") * getattr(cfg, "class")

    jf = jit(f)
    _check(jf, f, X)
    getattr(cfg, "my-w")[:] = 3.0
    setattr(cfg, "class", 4.0)
    _check(jf, f, X)


def test_missing_attribute_raises_pythons_error() -> None:
    cfg = types.SimpleNamespace(w=np.ones(4))

    def f(x):
        return x * cfg.w

    jf = jit(f)
    _check(jf, f, X)
    del cfg.w
    with pytest.raises(AttributeError):
        jf(X)
    cfg.w = np.full(4, 2.0)
    _check(jf, f, X)


def test_library_objects_and_enums_are_not_proxied() -> None:
    import enum

    class Mode(enum.Enum):
        A = 1
        B = 2

    mode = Mode.A

    def f(x):
        return x * np.pi if mode is Mode.A else x  # identity of enum members is kept

    _check(jit(f), f, X)


def test_explain_names_the_path() -> None:
    cfg = types.SimpleNamespace(w=np.ones(4))
    jf = jit(lambda x: x * cfg.w)
    assert "cfg.w" in str(jf.explain(X))


class _Layers:
    """A user container: iteration, len and `in` go to the object itself."""

    def __init__(self) -> None:
        self.ws = [np.ones(4), np.full(4, 2.0)]

    def __iter__(self):
        return iter(self.ws)

    def __len__(self) -> int:
        return len(self.ws)

    def __contains__(self, key) -> bool:
        return key == "a"

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False


class _Base:
    def apply(self, x):
        return x * self.w


class _Child(_Base):
    def __init__(self) -> None:
        self.w = np.ones(4)

    def apply(self, x):
        return super().apply(x) + 1


def test_user_protocols_and_super_still_work() -> None:
    layers, child = _Layers(), _Child()

    def f(x):
        with layers:
            for w in layers:
                x = x * w
        return x * len(layers) + ("a" in layers) + child.apply(x)

    jf = jit(f)
    _check(jf, f, X)
    child.w[:] = 5.0  # read through super()'s method, with the proxy as self
    _check(jf, f, X)


def test_namedtuple_and_dict_subclasses_are_followed() -> None:
    import collections

    Pair = collections.namedtuple("Pair", "w b")
    pair = Pair(np.ones(4), 2.0)
    table = collections.OrderedDict(w=np.ones(4), k=3.0)
    scale = collections.defaultdict(float, s=0.5)

    def f(x):
        w, b = pair  # unpacking and attributes alike
        return x * pair.w * b + w * table["w"] * table["k"] * scale["s"]

    jf = jit(f)
    _check(jf, f, X)
    pair.w[:] = 3.0
    table["k"] = 4.0
    scale["s"] = 2.0
    _check(jf, f, X)
