"""Stage 1: trace a Python function on Tracers into the Graph IR (and interpret it)."""

from .scipy_api import install as _install_scipy

_install_scipy()  # scipy.special.logsumexp accepts Tracers (frontend/scipy_api.py)

# Every handler table and Tracer method (operators, ndarray methods, __array_namespace__):
# frontend/registry.py is the one way NumPy reaches the frontend.
from .registry import install as _install_handlers  # noqa: E402

_install_handlers()
