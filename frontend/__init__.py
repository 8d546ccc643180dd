"""Stage 1: trace a Python function on Tracers into the Graph IR (and interpret it)."""

from .scipy_api import install as _install_scipy

_install_scipy()  # scipy.special.logsumexp accepts Tracers (frontend/scipy_api.py)

# Tracer.__array_namespace__ (the Array API standard), x.real/.imag/.conj()/.diagonal(), x.sort()
from . import array_api as _array_api  # noqa: E402,F401
from . import numpy_more as _numpy_more  # noqa: E402,F401
from . import sorting as _sorting  # noqa: E402,F401  (x.sort(), x.argsort()...)
