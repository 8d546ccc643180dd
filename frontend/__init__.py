"""Stage 1: trace a Python function on Tracers into the Graph IR (and interpret it)."""

from .scipy_api import install as _install_scipy

_install_scipy()  # scipy.special.logsumexp accepts Tracers (frontend/scipy_api.py)
