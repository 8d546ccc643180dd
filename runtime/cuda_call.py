"""One call of a loaded CUDA program (CudaExecutable.run's body), with everything that does
not change between calls worked out once per executable (`CallPlan`).

Planned once: which graph inputs are passed and how (converted Python ints, typed views of
the packed host-input area for C-ordered host arrays and scalars, device addresses of large
inputs, typed views of the values of the 0-d inputs the kernels take by value), the
argument table every launch reads its arguments from (`operator.itemgetter`s over it; arena
addresses fixed, device arrays' addresses patched per call, the by-value inputs' parameter
bytes), the outputs, the inputs copied back. Per call:
- each 0-d input the kernels take by value (codegen/cuda_base.by_value: Python scalars and
  0-d arrays the program does not update) is written into its `fj_val` parameter's bytes
  (no copy to the device: the launches carry it), the table's entry for it (a Python float
  for a float64 one: packed directly; a 0-d device array passed for one: its address);
- each host input is copied into the packed area with one NumPy assignment (other layouts
  take runtime/cuda_layout.host_bytes); the area (up to COMPARE_MAX bytes) is sent to the
  device only when its bytes differ from the last sent (unless the program updates a packed
  input in place);
- each device input's reading (made once per call, by the signature:
  runtime/cuda_interop.readings) gives its address; its layout is checked once per
  distinct layout;
- the launches run, their packed arguments reused when no device address changed them and
  they take no value (those that do pack the table's entries each call);
- one device-to-host copy brings back the outputs and the error word.
"""

from __future__ import annotations

import operator
import struct
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ..errors import RuntimeFailure
from ..lowering.loop_ir import Buffer
from ..lowering.lower import contiguous_strides
from . import cuda_interop
from .cuda_layout import host_bytes, span, value_param

if TYPE_CHECKING:
    from .backend_cuda import CudaExecutable

_PY_SCALARS = frozenset({float, int, bool, complex})
COMPARE_MAX = 1 << 14  # packed areas up to this size are compared with what was last sent


class _Input(NamedTuple):
    ref: int  # graph input
    b: Buffer
    slot: int  # its entry in the address table
    convert: Callable[[Any], Any] | None
    view: np.ndarray | None  # typed view of its bytes in the packed area (C order), or None
    # (by value: None; the view of the value in its parameter's bytes is in value_views)
    packed: int  # offset of its bytes in the packed area, or -1: copied on its own, or
    # BY_VALUE: passed as a kernel parameter
    dst: Any  # device address of its slot (by value: its parameter's bytes, a uint8 array)
    updated: bool
    fast: Callable[[float], bytes] | None = None  # by value: its parameter from a float


BY_VALUE = -2
_F64_PARAM = struct.Struct("<8xd").pack  # fj_val<double> of a Python float (value_param)


def _c_ordered(b: Buffer) -> bool:
    """Whether a buffer's bytes are its elements in C order (so any array of its shape and
    dtype can be assigned into a typed view of them)."""
    want = contiguous_strides(b.shape)
    return span(b) == (b.nbytes, 0) and all(
        s == w for s, w, n in zip(b.strides, want, b.shape) if n > 1)


def _getter(positions: list[int]) -> Callable[[list[int]], tuple[int, ...]]:
    if len(positions) == 1:
        p = positions[0]
        return lambda table: (table[p],)
    return operator.itemgetter(*positions)  # type: ignore[return-value]


class CallPlan:
    """What every call of `exe` does, prepared (see the module docstring)."""

    def __init__(self, exe: CudaExecutable) -> None:
        program, lay, base = exe.program, exe.layout, exe.base
        self.exe = exe
        n = len(program.buffers)
        self.scratch_at, self.err_at = n, n + 1
        table = [0] * (n + 2)
        for i, off in lay.slots.items():
            table[i] = base + off + lay.shift.get(i, 0)
        table[n], table[n + 1] = base + lay.scratch, base + lay.err
        self.table: list[Any] = table
        self.inputs: list[_Input] = []
        # a 0-d device array passed for a by-value input: slot -> the parameter's bytes after
        # the address (zeros)
        self.value_tail: dict[int, bytes] = {}
        self.value_views: dict[int, np.ndarray] = {}  # slot -> the value in its bytes
        for b in program.by_kind("input"):
            if b.ref in exe.idle:
                continue
            if b.index in exe.values:  # its fj_val's bytes (`raw`: address 0, the value)
                at, size, _ = value_param(b.dtype)
                raw = np.zeros(size, np.uint8)
                table[b.index] = raw.tobytes()
                self.value_tail[b.index] = bytes(size - 8)
                self.value_views[b.index] = raw[at:at + b.nbytes].view(b.dtype).reshape(())
                self.inputs.append(_Input(b.ref, b, b.index, exe.converts.get(b.ref), None,
                                          BY_VALUE, raw, False,
                                          _F64_PARAM if b.dtype == np.float64 else None))
                continue
            start = lay.slots[b.index]
            view, packed = None, -1
            if lay.small[0] <= start < lay.small[1]:
                packed = start - lay.small[0]
                if b.nbytes and _c_ordered(b):
                    view = exe._stage[packed:packed + b.nbytes].view(b.dtype).reshape(b.shape)
            self.inputs.append(_Input(b.ref, b, b.index, exe.converts.get(b.ref), view, packed,
                                      base + start, b.ref in program.updates))
        # The packed area is sent again only when its bytes changed (scalars mostly do not),
        # unless a kernel writes a packed input in place, or comparing would cost more than it
        # can save (a large area). `sent`: the bytes the device holds.
        self.resend = len(exe._stage) > COMPARE_MAX or any(
            i.packed >= 0 and i.updated for i in self.inputs)
        # (a call with device arrays sends the 0-d inputs only: again every call only when one
        # of them is updated in place)
        self.resend_scalars = any(i.packed >= 0 and i.updated and not i.b.shape
                                  for i in self.inputs)
        # what the device's packed area holds: its first `layout.scalars` bytes (the 0-d
        # inputs) and the rest (None: not known)
        self.sent_head: bytes | None = None
        self.sent_tail: bytes | None = None
        self.outputs = program.by_kind("output")
        self.out_views = [(b.index, lay.slots[b.index] - lay.out[0], b.dtype, b.shape)
                          for b in self.outputs]
        self.checks = any(k.checks for k in exe.module.kernels)
        self.copy_back = [b for b in program.by_kind("input")
                          if b.ref in program.updates and b.nbytes]
        self.results = [(o.kind == "buffer", o.index) for o in program.outputs]
        # each launch: (run with the arena's addresses, run with those of a patched table)
        self.launches: list[tuple[Callable[[], Any], Callable[[list[int]], Any]]] = []
        for k in exe.module.kernels:
            if not k.size:
                continue
            positions = list(k.buffers) + [self.scratch_at] * k.scratch + [
                self.err_at] * k.checks
            fixed, given = exe.launcher(k, tuple(table[p] for p in positions))
            get = _getter(positions)
            if exe.values.intersection(k.buffers):  # (its values: the table's, each call)
                fixed = lambda given=given, get=get: given(get(table))  # noqa: E731
            self.launches.append((fixed, lambda t, given=given, get=get: given(get(t))))
        if exe.timer is not None and self.launches:  # FUSEJIT_PROFILE: CUDA events around them
            self.launches = exe.timer.wrap(self.launches, [k.kernel for k in exe.module.kernels
                                                           if k.size])
        self.one_gpu = exe.gpus == 1
        # the GPUs a reading may state and need no check_arg (the driver is not asked)
        self.on = (exe.device, cuda_interop.ON_CONTEXT) if self.one_gpu else (exe.device,)
        self.accepted: dict[int, cuda_interop.Layout] = {}  # input slot -> its last layout

    def run(self, inputs: list[Any], device: list[bool] | None, device_outputs: bool
            ) -> list[Any]:
        """The call, with the executable's context current; `device` flags the graph inputs
        that are device arrays (None: none is)."""
        exe = self.exe
        table = None  # the address table, copied when a device address is patched in
        staged = False
        readings = cuda_interop.readings() if device is not None else None
        for ref, b, slot, convert, view, packed, dst, updated, fast in self.inputs:
            v = inputs[ref]
            if convert is not None:
                v = convert(v)
            if device is not None and device[ref]:
                if table is None:
                    table = self.table.copy()
                hit = readings.get(id(v)) if readings else None
                d = hit[1] if hit is not None and hit[0] is v else cuda_interop.read(v)
                if d.layout is not self.accepted.get(slot):
                    self._accept(d.layout, b)
                if d.device not in self.on or (updated and d.readonly) or (
                        d.stream is not None and d.stream not in (1, 2)):
                    cuda_interop.check_arg(d, exe.device, self.one_gpu, updated, b)
                if packed != BY_VALUE:
                    table[slot] = d.ptr if b.nbytes else 0
                else:  # (a 0-d device array for a by-value input: its address in the fj_val)
                    table[slot] = d.ptr.to_bytes(8, "little") + self.value_tail[slot]
                continue
            if view is not None:
                if type(v) is np.ndarray and v.shape == b.shape and v.dtype == b.dtype:
                    view[...] = v
                    staged = True
                    continue
                if not b.shape and type(v) in _PY_SCALARS:
                    view[()] = v  # (as np.asarray(v, b.dtype): the same cast and errors)
                    staged = True
                    continue
            if packed == BY_VALUE:  # the parameter's bytes, in the table (and this call's)
                if fast is not None and type(v) is float:
                    entry = fast(v)
                else:
                    view = self.value_views[slot]
                    if type(v) in _PY_SCALARS or (getattr(v, "dtype", None) == b.dtype
                                                  and getattr(v, "shape", None) == ()):
                        view[()] = v  # (as np.asarray(v, b.dtype): the same cast and errors)
                    else:
                        view[()] = host_bytes(np.asarray(v, b.dtype) if np.ndim(v) == 0
                                              else v, b).view(b.dtype)[0]
                    entry = dst.tobytes()
                self.table[slot] = entry
                if table is not None:
                    table[slot] = entry
                continue
            data = host_bytes(np.asarray(v, b.dtype) if np.ndim(v) == 0 else v, b)
            if packed >= 0:
                exe._stage[packed:packed + data.size] = data
                staged = staged or data.size > 0
            else:
                exe._htod(dst, data)
        if staged:
            # with device arrays the host values are 0-d, at the start of the area: only those
            # bytes are sent (the rest holds stale host copies no launch reads)
            self._send_packed(device is not None)
        outs: dict[int, Any] = {}
        if device_outputs:
            if table is None:
                table = self.table.copy()
            for b in self.outputs:
                pool = exe.pools.get(b.index)
                if pool is None:
                    outs[b.index] = exe._gpuarray.empty(b.shape, b.dtype)
                    table[b.index] = 0
                else:
                    outs[b.index] = o = pool.take()
                    table[b.index] = o.ptr
        if table is None:
            for fixed, _ in self.launches:
                fixed()
        else:
            for _, patched in self.launches:
                patched(table)
        status = 0
        if not device_outputs and (self.outputs or self.checks):
            lo, hi = exe.layout.out
            host = np.empty(hi - lo, np.uint8)
            exe._cuda.memcpy_dtoh(host, exe.base + lo)
            exe.transfers["dtoh"] += 1
            status = int.from_bytes(host.data[:4], "little")
            for i, o, dtype, shape in self.out_views:
                outs[i] = np.ndarray(shape, dtype, host, o)
        elif self.checks:
            word = np.zeros(1, np.uint32)
            exe._cuda.memcpy_dtoh(word, exe.base + exe.layout.err)
            exe.transfers["dtoh"] += 1
            status = int(word[0])
        if status:
            exe._cuda.memset_d32(exe.base + exe.layout.err, 0, 1)
            exe.raise_error(status, inputs, device is None)
        if self.copy_back:
            self._copy_back(inputs)
        return [outs[i] if buffer else inputs[i] for buffer, i in self.results]

    def forget(self) -> None:
        """What the device's packed area holds is not known (after a failed call)."""
        self.sent_head = self.sent_tail = None

    def _send_packed(self, scalars_only: bool) -> None:
        """Send the packed area (or, with device arrays, its 0-d inputs only: the other
        inputs' bytes there are stale host copies no launch reads) unless the device holds
        those bytes already."""
        exe, n = self.exe, self.exe.layout.scalars
        if scalars_only:
            head = None if self.resend_scalars else exe._stage[:n].tobytes()
            if head is None or head != self.sent_head:
                self.sent_head = None
                exe._htod(exe.base + exe.layout.small[0], exe._stage[:n])
                self.sent_head = head
            return
        now = None if self.resend else exe._stage.tobytes()
        head, tail = self.sent_head, self.sent_tail
        if now is None or head is None or tail is None or now != head + tail:
            self.forget()
            exe._htod(exe.base + exe.layout.small[0], exe._stage)
            if now is not None:
                self.sent_head, self.sent_tail = now[:n], now[n:]

    def transfer_report(self) -> list[str]:
        """What one call copies between host and device, for `explain`: per kind of call
        (NumPy arguments, device arrays), each copy and its bytes."""
        lay = self.exe.layout
        own = [i for i in self.inputs if i.packed == -1 and i.b.nbytes]
        small = [i for i in self.inputs if i.packed >= 0]
        byval = ", ".join(i.b.name for i in self.inputs if i.packed == BY_VALUE)
        param = (f"  {byval} (scalars, 0-d arrays): kernel parameters, passed by value with "
                 "each launch: no copy" if byval else None)
        packed = lay.small[1] - lay.small[0]
        when = ("every call" if self.resend
                else "only when those bytes differ from the last call's")
        to_dev = [f"{i.b.name} {i.b.dtype}{list(i.b.shape)}: {span(i.b)[0]} B" for i in own]
        if small and packed:
            kinds = ("small inputs and scalars" if any(not i.b.shape for i in small)
                     else "small inputs")
            to_dev.append(f"{packed} B packed in one copy ({', '.join(i.b.name for i in small)}"
                          f": {kinds}), sent {when}")
        back = lay.out[1] - lay.out[0]
        what = ", ".join([b.name for b in self.outputs] + ["the status word"])
        lines = ["NumPy arguments:",
                 f"  to the device: {len(to_dev)} cop{'y' if len(to_dev) == 1 else 'ies'}"
                 + (": " + "; ".join(to_dev) if to_dev else "")]
        if param:
            lines.append(param)
        if self.outputs or self.checks:
            lines.append(f"  to the host: {back} B in one copy ({what})")
        if self.copy_back:
            lines.append("  copied back into the arguments updated in place: " + "; ".join(
                f"{b.name} {span(b)[0]} B" for b in self.copy_back))
        arrays = ", ".join(i.b.name for i in sorted(own + small, key=lambda i: i.ref)
                           if i.b.shape)
        dev = [f"  device arrays (GPUArray, CuPy, PyTorch CUDA tensors) for {arrays} are read "
               "and written in place: no copies of them"] if arrays else []
        if param:
            dev.append(param + " (a 0-d device array for one: its address)")
        if lay.scalars:
            when = ("every call" if self.resend_scalars
                    else "only when those bytes differ from the last call's")
            dev.append(f"  scalars and 0-d host arrays the program updates in place: the first "
                       f"{lay.scalars} B of the packed copy, sent {when}")
        dev.append("  results stay on the device (device_output=True, the default with device "
                   "arguments): " + ("only the error word comes back (4 B)" if self.checks
                                     else "nothing comes back"))
        return lines + ["device arrays as arguments:"] + dev

    def _accept(self, lay: cuda_interop.Layout, b: Buffer) -> None:
        """Check that device arrays of layout `lay` are what input `b` was compiled for
        (RuntimeFailure otherwise); later arrays of that layout are not checked again."""
        item = lay.dtype.itemsize
        if lay.dtype != b.dtype or lay.shape != b.shape or any(
                s != e * item for s, e, n in zip(lay.strides, b.strides, b.shape) if n > 1):
            raise RuntimeFailure(f"device array for {b.name} is {lay.dtype}{list(lay.shape)} "
                                 f"strides {lay.strides}; expected {b.dtype}{list(b.shape)} "
                                 f"element strides {b.strides}")
        self.accepted[b.index] = lay

    def _copy_back(self, inputs: list[Any]) -> None:
        """Write the device copies of host inputs the program updated back into them."""
        exe = self.exe
        for b in self.copy_back:
            v = inputs[b.ref]
            if not isinstance(v, np.ndarray):
                continue
            nbytes, lo = span(b)
            raw = np.empty(nbytes, np.uint8)
            exe._cuda.memcpy_dtoh(raw, exe.base + exe.layout.slots[b.index])
            exe.transfers["dtoh"] += 1
            item = b.dtype.itemsize
            elems = raw.view(b.dtype)[lo // item:]
            v[...] = np.lib.stride_tricks.as_strided(
                elems, b.shape, tuple(s * item for s in b.strides), writeable=False)
