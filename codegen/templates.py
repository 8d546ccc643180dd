"""The jinja2 environment that renders the templates in codegen/templates/ (C and CUDA
programs, the export's header and API wrapper). jinja2 is imported on the first render, which
keeps `import fusejit` fast."""

from __future__ import annotations

import functools
import os
from typing import Any

TEMPLATE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")


@functools.lru_cache(maxsize=1)
def env() -> Any:
    """The shared jinja2.Environment (strict: an undefined name is an error)."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
        trim_blocks=True, lstrip_blocks=False, keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined)


def render(template: str, /, **values: Any) -> str:
    """Template `template` rendered with `values`."""
    return env().get_template(template).render(**values)
