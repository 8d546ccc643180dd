"""C text of an ahead-of-time export: the public header and the API wrapper around a Program.

The export's signature is described by plain data (`ExportSpec`: arguments, results,
workspace size, status codes); this module renders it as a self-contained C header
(`templates/export.h.j2`) and as the wrapper functions (`templates/export_api.c.j2`) that are
appended to the Program's own translation unit (`codegen.c.render`), so the exported library
runs exactly the code the JIT runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import Status
from ..frontend.ops import ctype
from ..lowering.loop_ir import Program
from . import templates
from .c import io_buffers

# Status codes the export's wrapper adds to the kernels' own (positive, bitwise-ORed) codes:
# code -> (define suffix, message), from errors.Status.
INTERFACE_ERRORS: dict[int, tuple[str, str]] = {s.code: (s.macro, s.message)
                                                for s in Status.interface()}
# ... and the export's own check of the CPU it runs on (kept here, not in errors.Status: a
# kernel never returns it).
ERR_CPU = -4
INTERFACE_ERRORS[ERR_CPU] = ("ERR_CPU", "this CPU lacks an instruction-set feature the library "
                                        "was compiled for")

_C_KEYWORDS = frozenset("""auto break case char const continue default do double else enum
extern float for goto if inline int long register restrict return short signed sizeof static
struct switch typedef union unsigned void volatile while bool true false asm typeof
_Bool _Complex _Imaginary _Alignas _Alignof _Atomic _Generic _Noreturn _Static_assert
_Thread_local workspace status""".split())


def check_name(name: str) -> str:
    """`name` if it can prefix the export's C symbols, else ValueError saying why."""
    if not re.fullmatch(r"[A-Za-z_]\w*", name, flags=re.ASCII) or name in _C_KEYWORDS:
        raise ValueError(f"export name {name!r} is not usable as a C identifier (letters, "
                         "digits and _, not starting with a digit, not a C keyword); pass "
                         "name=... (--name on the command line)")
    return name


def public_ctype(dtype: np.dtype) -> str:
    """The C element type of `dtype` in the public header (float16 travels as its bits)."""
    dtype = np.dtype(dtype)
    return "uint16_t" if dtype == np.float16 else ctype(dtype)


def c_identifier(name: str, taken: set[str]) -> str:
    """`name` made into a C identifier that is not a keyword and not in `taken` (updated)."""
    ident = re.sub(r"\W", "_", name, flags=re.ASCII) or "arg"
    if ident[0].isdigit():
        ident = "_" + ident
    while ident in _C_KEYWORDS or ident in taken or re.fullmatch(r"out\d+", ident):
        ident += "_"
    taken.add(ident)
    return ident


@dataclass(frozen=True)
class ExportArg:
    """One argument of the exported function, passed as a pointer to element [0, ..., 0]."""

    name: str  # the Python parameter name
    cname: str  # its C parameter name
    position: int  # position among the Python function's parameters
    kind: str  # "array" | "numpy_scalar" | "int" | "float" | "complex" | "bool"
    dtype: np.dtype
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # element strides
    contiguous: bool
    buffer: int  # Program buffer index
    written: bool = False  # the program writes it in place
    range: tuple[int, int] | None = None  # allowed values of a Python int argument


@dataclass(frozen=True)
class ExportOut:
    """One leaf of the function's result, in flattening order."""

    index: int
    path: str  # where it sits in the Python result, e.g. "result[0]['h']"
    dtype: np.dtype
    shape: tuple[int, ...]
    scalar: bool  # a NumPy scalar (not a 0-d array) in Python
    source: str  # "buffer" (its own out parameter) | "input" | "alias"
    cname: str = ""  # out parameter (source "buffer")
    buffer: int = -1
    input: int = -1  # index into ExportSpec.args (source "input")
    alias_of: int = -1  # earlier output index that is the same array (source "alias")


@dataclass(frozen=True)
class ExportSpec:
    """Everything the header, wrapper and metadata say about one exported function."""

    name: str  # C symbol prefix
    function: str  # module:qualname of the Python function
    args: list[ExportArg]
    outputs: list[ExportOut]
    static: list[tuple[str, str]]  # (parameter, repr of the value fixed at export)
    workspace_bytes: int
    workspace: str  # "caller": NAME takes a workspace pointer; "alloc": NAME allocates
    errors: dict[int, tuple[str, str]]  # kernel status bit -> (define suffix, message)
    version: str
    compiler: str = ""
    openmp: bool = True
    blas: str = "none (generated loops only)"
    notes: list[str] = field(default_factory=list)
    target: str = "native"  # the instruction-set target compiled for (runtime/targets.py)
    # (/proc/cpuinfo name, __builtin_cpu_supports name) of each CPU feature the library
    # checks before it runs
    cpu_checks: list[tuple[str, str]] = field(default_factory=list)

    @property
    def macro(self) -> str:
        return re.sub(r"\W", "_", self.name, flags=re.ASCII).upper()

    @property
    def entry(self) -> str:
        return self.name

    @property
    def entry_alloc(self) -> str:
        return self.name if self.workspace == "alloc" else f"{self.name}_alloc"

    def params(self) -> list[str]:
        """The C parameter list shared by both variants (arguments, then out parameters)."""
        ps = []
        for a in self.args:
            const = "" if a.written else "const "
            ps.append(f"{const}{public_ctype(a.dtype)} *{a.cname}")
        for o in self.outputs:
            if o.source == "buffer":
                ps.append(f"{public_ctype(o.dtype)} *{o.cname}")
        return ps

    def abi(self) -> str:
        """A one-line fingerprint of the specialisation, compiled into the library and stored
        in the metadata; `load` refuses a pair that disagrees."""
        ins = ", ".join(f"{a.name}:{a.kind}:{a.dtype.name}{list(a.shape)}/{list(a.strides)}"
                        for a in self.args)
        outs = ", ".join(f"{o.source}:{o.dtype.name}{list(o.shape)}" for o in self.outputs)
        return (f"fusejit-export/1 {self.name}({ins}) -> ({outs}) "
                f"workspace={self.workspace_bytes} mode={self.workspace}")


def _dims(xs: tuple[int, ...]) -> str:
    return "{" + ", ".join(str(x) for x in xs) + "}"


def _c_int64(v: int) -> str:
    return "(-INT64_C(9223372036854775807) - 1)" if v == -(1 << 63) else f"INT64_C({v})"


def _arg_views(spec: ExportSpec) -> list[dict]:
    views = []
    for a in spec.args:
        size = int(np.prod(a.shape, dtype=np.int64))
        if a.kind == "array":
            what = (f"{a.dtype.name}{list(a.shape)}, "
                    + ("C-contiguous" if a.contiguous else f"element strides {list(a.strides)}"))
        else:
            what = {"numpy_scalar": f"{a.dtype.name} scalar (a NumPy scalar)",
                    "int": "int64 (a Python int)", "float": "float64 (a Python float)",
                    "complex": "complex128 (a Python complex)",
                    "bool": "bool (a Python bool, one byte 0 or 1)"}[a.kind]
        if a.range is not None:
            what += f"; must lie in [{a.range[0]}, {a.range[1]}] (else {spec.macro}_ERR_RANGE)"
        if a.written:
            what += "; WRITTEN in place (must not overlap any other argument)"
        views.append({"a": a, "upper": a.cname.upper(), "what": what, "size": size,
                      "shape": _dims(a.shape), "strides": _dims(a.strides),
                      "lo": _c_int64(a.range[0]) if a.range else "",
                      "hi": _c_int64(a.range[1]) if a.range else ""})
    return views


def _out_views(spec: ExportSpec) -> list[dict]:
    views = []
    for o in spec.outputs:
        if o.source == "buffer":
            what = (f"{o.cname}: {o.dtype.name} scalar (one element)" if o.scalar else
                    f"{o.cname}: {o.dtype.name}{list(o.shape)}, C-contiguous")
        elif o.source == "input":
            what = f"argument {spec.args[o.input].cname} returned unchanged (no parameter)"
        else:
            what = f"the same array as {spec.outputs[o.alias_of].path} (no parameter)"
        views.append({"o": o, "upper": o.cname.upper(), "what": what,
                      "size": int(np.prod(o.shape, dtype=np.int64)), "shape": _dims(o.shape)})
    return views


def render_header(spec: ExportSpec) -> str:
    """The public C header of an export (self-contained, C and C++)."""
    return templates.render("export.h.j2",
        spec=spec, args=_arg_views(spec), outs=_out_views(spec), params=spec.params(),
        features=", ".join(f for f, _ in spec.cpu_checks) or "none checked",
        errors=sorted(spec.errors.items()), iface=sorted(INTERFACE_ERRORS.items(), reverse=True))


def c_string(text: str, width: int = 96) -> str:
    """`text` as a C string literal (octal escapes outside printable ASCII), split into
    adjacent literals of about `width` characters, never inside an escape."""
    tokens = [_C_ESC.get(ch, ch) if 32 <= ord(ch) < 127 else f"\\{ord(ch) & 0xFF:03o}"
              for ch in text.encode("utf-8").decode("latin-1")]
    pieces, line = [], ""
    for t in tokens:
        if len(line) + len(t) > width:
            pieces.append(line)
            line = ""
        line += t
    pieces.append(line)
    return "\n    ".join(f'"{p}"' for p in pieces)


_C_ESC = {"\\": "\\\\", '"': '\\"', "?": "\\?"}


def render_wrapper(spec: ExportSpec, program: Program, table: str = "{}") -> str:
    """The exported functions, appended to the Program's C source (after the header).
    `table`: the JSON signature table compiled into the library (`NAME_signature()`)."""
    by_buffer = {a.buffer: a for a in spec.args}
    out_by_buffer = {o.buffer: o for o in spec.outputs if o.source == "buffer"}
    io = []
    consts = []
    for b in io_buffers(program):
        buf = program.buffers[b]
        if buf.kind == "input":
            io.append(f"(char *){by_buffer[b].cname}")
        elif buf.kind == "output":
            io.append(f"(char *){out_by_buffer[b].cname}")
        else:
            data = np.ascontiguousarray(program.consts[buf.ref]).tobytes()
            cname = f"fj_const{buf.ref}"
            consts.append({"name": cname, "size": max(len(data), 1),
                           "bytes": ", ".join(str(x) for x in data) or "0"})
            io.append(f"(char *){cname}")
    call_args = [a.cname for a in spec.args] + [o.cname for o in spec.outputs
                                                 if o.source == "buffer"]
    return templates.render("export_api.c.j2",
        spec=spec, args=_arg_views(spec), params=spec.params(), io=io, consts=consts,
        table=c_string(table), checks=[
            (builtin, c_string(f"this CPU lacks {feature}, which the library was compiled for "
                               f"(target {spec.target})"), c_string(feature))
            for feature, builtin in spec.cpu_checks],
        call_args=call_args, errors=sorted(spec.errors.items()),
        iface=sorted(INTERFACE_ERRORS.items(), reverse=True))
