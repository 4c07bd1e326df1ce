"""Warp-style Python ctypes decoder of XLA FFI call frames, for the side-by-side benchmark.

Written for deno-xla-ffi in the style of NVIDIA warp's ctypes binding of the
XLA FFI ABI: a ctypes Structure for every struct, a CFUNCTYPE handler, and
the decode warp does on each call (buffers to dtype/shape/data objects; names
and strings through ctypes char arrays; scalars and arrays through
ctypes.string_at + numpy.frombuffer, or ctypes arrays when numpy is absent).

The handler is driven from C by the bench library's `bench_drive` (same
thread, or foreign pthreads), exactly as an XLA runtime calls a handler.

One shot:  python3 warp_style.py --lib LIB --frame 0 --iters N --threads K
Serve:     python3 warp_style.py --lib LIB --serve   (JSON lines in, JSON lines out)
Output: {"ns_per_call": float, "digest": "16 hex digits", "errors": int}

Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
"""

import argparse
import ctypes
import json
import sys

try:
    import numpy as np
except ImportError:  # decode into ctypes arrays instead
    np = None


class XLA_FFI_Extension_Base(ctypes.Structure):
    pass


XLA_FFI_Extension_Base._fields_ = [
    ("struct_size", ctypes.c_size_t),
    ("type", ctypes.c_int),
    ("next", ctypes.POINTER(XLA_FFI_Extension_Base)),
]


class XLA_FFI_Buffer(ctypes.Structure):
    _fields_ = (
        ("struct_size", ctypes.c_size_t),
        ("extension_start", ctypes.POINTER(XLA_FFI_Extension_Base)),
        ("dtype", ctypes.c_int),
        ("data", ctypes.c_void_p),
        ("rank", ctypes.c_int64),
        ("dims", ctypes.POINTER(ctypes.c_int64)),
    )


class XLA_FFI_Args(ctypes.Structure):
    _fields_ = (
        ("struct_size", ctypes.c_size_t),
        ("extension_start", ctypes.POINTER(XLA_FFI_Extension_Base)),
        ("size", ctypes.c_int64),
        ("types", ctypes.POINTER(ctypes.c_int)),
        ("args", ctypes.POINTER(ctypes.c_void_p)),
    )


class XLA_FFI_Rets(ctypes.Structure):
    _fields_ = (
        ("struct_size", ctypes.c_size_t),
        ("extension_start", ctypes.POINTER(XLA_FFI_Extension_Base)),
        ("size", ctypes.c_int64),
        ("types", ctypes.POINTER(ctypes.c_int)),
        ("rets", ctypes.POINTER(ctypes.c_void_p)),
    )


class XLA_FFI_ByteSpan(ctypes.Structure):
    _fields_ = (("ptr", ctypes.POINTER(ctypes.c_char)), ("len", ctypes.c_size_t))


class XLA_FFI_Scalar(ctypes.Structure):
    _fields_ = (("dtype", ctypes.c_int), ("value", ctypes.c_void_p))


class XLA_FFI_Array(ctypes.Structure):
    _fields_ = (("dtype", ctypes.c_int), ("size", ctypes.c_size_t), ("data", ctypes.c_void_p))


class XLA_FFI_Attrs(ctypes.Structure):
    _fields_ = (
        ("struct_size", ctypes.c_size_t),
        ("extension_start", ctypes.POINTER(XLA_FFI_Extension_Base)),
        ("size", ctypes.c_int64),
        ("types", ctypes.POINTER(ctypes.c_int)),
        ("names", ctypes.POINTER(ctypes.POINTER(XLA_FFI_ByteSpan))),
        ("attrs", ctypes.POINTER(ctypes.c_void_p)),
    )


class XLA_FFI_Api_Version(ctypes.Structure):
    _fields_ = (
        ("struct_size", ctypes.c_size_t),
        ("extension_start", ctypes.POINTER(XLA_FFI_Extension_Base)),
        ("major_version", ctypes.c_int),
        ("minor_version", ctypes.c_int),
    )


class XLA_FFI_Api(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("extension_start", ctypes.POINTER(XLA_FFI_Extension_Base)),
        ("api_version", XLA_FFI_Api_Version),
        ("internal_api", ctypes.c_void_p),
    ] + [(name, ctypes.c_void_p) for name in (
        "XLA_FFI_Error_Create", "XLA_FFI_Error_GetMessage", "XLA_FFI_Error_Destroy",
        "XLA_FFI_Handler_Register", "XLA_FFI_Stream_Get", "XLA_FFI_TypeId_Register",
        "XLA_FFI_ExecutionContext_Get", "XLA_FFI_State_Set", "XLA_FFI_State_Get",
        "XLA_FFI_DeviceMemory_Allocate", "XLA_FFI_DeviceMemory_Free",
        "XLA_FFI_ThreadPool_Schedule", "XLA_FFI_ThreadPool_NumThreads",
        "XLA_FFI_Future_Create", "XLA_FFI_Future_SetAvailable", "XLA_FFI_Future_SetError",
        "XLA_FFI_RunId_Get", "XLA_FFI_DeviceOrdinal_Get")]


class XLA_FFI_CallFrame(ctypes.Structure):
    _fields_ = (
        ("struct_size", ctypes.c_size_t),
        ("extension_start", ctypes.POINTER(XLA_FFI_Extension_Base)),
        ("api", ctypes.POINTER(XLA_FFI_Api)),
        ("ctx", ctypes.c_void_p),
        ("stage", ctypes.c_int),
        ("args", XLA_FFI_Args),
        ("rets", XLA_FFI_Rets),
        ("attrs", XLA_FFI_Attrs),
        ("future", ctypes.c_void_p),
    )


ATTR_ARRAY, ATTR_DICTIONARY, ATTR_SCALAR, ATTR_STRING = 1, 2, 3, 4

# XLA data type -> (numpy dtype name, ctypes element type); 16-bit floats are
# raw 16-bit words in the ctypes fallback.
_TYPES = {
    1: ("bool", ctypes.c_bool), 2: ("int8", ctypes.c_int8), 3: ("int16", ctypes.c_int16),
    4: ("int32", ctypes.c_int32), 5: ("int64", ctypes.c_int64), 6: ("uint8", ctypes.c_uint8),
    7: ("uint16", ctypes.c_uint16), 8: ("uint32", ctypes.c_uint32), 9: ("uint64", ctypes.c_uint64),
    10: ("float16", ctypes.c_uint16), 11: ("float32", ctypes.c_float),
    12: ("float64", ctypes.c_double), 15: ("complex64", ctypes.c_double),
    18: ("complex128", ctypes.c_double * 2),
}
_NP = None
_ITEMSIZE = {code: ctypes.sizeof(ct) for code, (_, ct) in _TYPES.items()}


def use_numpy(enabled):
    """Decode with numpy (as warp does) when enabled and present, else with ctypes arrays."""
    global _NP
    _NP = {code: np.dtype(name) for code, (name, _) in _TYPES.items()} if enabled and np else None


use_numpy(True)


class FfiBuffer:
    """A decoded buffer, as warp's FfiBuffer: dtype, shape and data address."""

    __slots__ = ("xla_dtype", "dtype", "shape", "data")

    def __init__(self, xla_buffer):
        self.xla_dtype = xla_buffer.dtype
        self.dtype = _NP[xla_buffer.dtype] if _NP is not None else _TYPES[xla_buffer.dtype][1]
        self.shape = tuple(xla_buffer.dims[i] for i in range(xla_buffer.rank))
        self.data = xla_buffer.data


class _Typed:
    """A scalar or array value in the ctypes fallback: XLA dtype + ctypes object."""

    __slots__ = ("xla_dtype", "value")

    def __init__(self, xla_dtype, value):
        self.xla_dtype = xla_dtype
        self.value = value


def decode_bytespan(span):
    chars = ctypes.cast(span.ptr, ctypes.POINTER(ctypes.c_char * span.len))
    return chars.contents.raw.decode("utf-8")


def decode_scalar(scalar):
    if _NP is not None:
        dtype = _NP[scalar.dtype]
        raw = ctypes.string_at(scalar.value, dtype.itemsize)
        return np.frombuffer(raw, dtype=dtype).reshape(())
    ct = _TYPES[scalar.dtype][1]
    return _Typed(scalar.dtype, ct.from_buffer_copy(ctypes.string_at(scalar.value, ctypes.sizeof(ct))))


def decode_array(array):
    if _NP is not None:
        dtype = _NP[array.dtype]
        raw = ctypes.string_at(array.data, dtype.itemsize * array.size)
        return np.frombuffer(raw, dtype=dtype)
    ct = _TYPES[array.dtype][1] * array.size
    return _Typed(array.dtype, ct.from_buffer_copy(ctypes.string_at(array.data, ctypes.sizeof(ct))))


def decode_attrs(attrs):
    result = {}
    for i in range(attrs.size):
        name = decode_bytespan(attrs.names[i].contents)
        kind = attrs.types[i]
        if kind == ATTR_STRING:
            value = decode_bytespan(ctypes.cast(attrs.attrs[i], ctypes.POINTER(XLA_FFI_ByteSpan)).contents)
        elif kind == ATTR_SCALAR:
            value = decode_scalar(ctypes.cast(attrs.attrs[i], ctypes.POINTER(XLA_FFI_Scalar)).contents)
        elif kind == ATTR_ARRAY:
            value = decode_array(ctypes.cast(attrs.attrs[i], ctypes.POINTER(XLA_FFI_Array)).contents)
        elif kind == ATTR_DICTIONARY:
            value = decode_attrs(ctypes.cast(attrs.attrs[i], ctypes.POINTER(XLA_FFI_Attrs)).contents)
        else:
            raise ValueError(f"unexpected attribute type {kind}")
        result[name] = value
    return result


def decode_frame(frame):
    args = [FfiBuffer(ctypes.cast(frame.args.args[i], ctypes.POINTER(XLA_FFI_Buffer)).contents)
            for i in range(frame.args.size)]
    rets = [FfiBuffer(ctypes.cast(frame.rets.rets[i], ctypes.POINTER(XLA_FFI_Buffer)).contents)
            for i in range(frame.rets.size)]
    return {"stage": frame.stage, "args": args, "rets": rets, "attrs": decode_attrs(frame.attrs)}


# ---- canonical text and digest (see bench/native/c_decoder.c) ------------

def _dtype_code(value):
    if isinstance(value, _Typed):
        return value.xla_dtype
    for code, dt in _NP.items():
        if dt == value.dtype:
            return code
    raise ValueError(f"no XLA dtype for {value.dtype}")


def _value_bytes(value):
    return bytes(value.value) if isinstance(value, _Typed) else value.tobytes()


def _buffer_line(b):
    nbytes = _ITEMSIZE[b.xla_dtype]
    for d in b.shape:
        nbytes *= d
    dims = "x".join(str(d) for d in b.shape) if b.shape else "-"
    head = ctypes.string_at(b.data, min(4, nbytes)).hex() if nbytes else ""
    return f"buf {b.xla_dtype} {len(b.shape)} {dims} {head}\n"


def _attr_lines(attrs, out):
    for name, value in attrs.items():
        if isinstance(value, dict):
            out.append(f"{name} dict {len(value)}\n")
            _attr_lines(value, out)
        elif isinstance(value, str):
            out.append(f"{name} string {value.encode('utf-8').hex()}\n")
        elif (isinstance(value, _Typed) and isinstance(value.value, ctypes.Array)) or (
                _NP is not None and not isinstance(value, _Typed) and value.ndim == 1):
            size = len(value.value) if isinstance(value, _Typed) else value.size
            out.append(f"{name} array {_dtype_code(value)} {size} {_value_bytes(value).hex()}\n")
        else:
            out.append(f"{name} scalar {_dtype_code(value)} {_value_bytes(value).hex()}\n")


def canonical_text(decoded):
    out = [f"stage {decoded['stage']}\n", f"args {len(decoded['args'])}\n"]
    out += [_buffer_line(b) for b in decoded["args"]]
    out.append(f"rets {len(decoded['rets'])}\n")
    out += [_buffer_line(b) for b in decoded["rets"]]
    out.append(f"attrs {len(decoded['attrs'])}\n")
    _attr_lines(decoded["attrs"], out)
    return "".join(out)


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def digest(decoded):
    return f"{fnv1a64(canonical_text(decoded).encode('utf-8')):016x}"


# ---- the handler and the driver -------------------------------------------

XLA_FFI_Handler = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.POINTER(XLA_FFI_CallFrame))
_state = {"last": None, "failure": None}


def _handle(call_frame):
    try:
        _state["last"] = decode_frame(call_frame.contents)
        return None
    except Exception as e:  # never let an exception cross the C boundary
        _state["failure"] = repr(e)
        return 1


HANDLER = XLA_FFI_Handler(_handle)


def open_bench_library(path):
    lib = ctypes.CDLL(path)
    lib.bench_frame.restype = ctypes.c_void_p
    lib.bench_frame.argtypes = (ctypes.c_int32,)
    lib.bench_drive.restype = ctypes.c_int64
    lib.bench_drive.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int32,
                                ctypes.POINTER(ctypes.c_double), ctypes.c_void_p)
    return lib


def run(lib, frame_id, iters, threads):
    frame = lib.bench_frame(frame_id)
    if not frame:
        raise ValueError(f"no frame {frame_id}")
    _state["last"] = None
    _state["failure"] = None
    ns = ctypes.c_double()
    errors = lib.bench_drive(ctypes.cast(HANDLER, ctypes.c_void_p), frame, iters, threads,
                             ctypes.byref(ns), None)
    if errors < 0:
        raise RuntimeError(f"bench_drive failed ({errors})")
    last = _state["last"]
    return {
        "ns_per_call": ns.value,
        "errors": int(errors),
        "failure": _state["failure"],
        "digest": digest(last) if last is not None else None,
        "numpy": _NP is not None,
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lib", required=True, help="path of the bench shared library")
    p.add_argument("--frame", type=int, default=0, help="0 standard, 1 small, 2 large")
    p.add_argument("--iters", type=int, default=1000)
    p.add_argument("--threads", type=int, default=0, help="0: calling thread; k: k foreign threads")
    p.add_argument("--no-numpy", action="store_true", help="decode with ctypes arrays only")
    p.add_argument("--serve", action="store_true", help="read JSON requests from stdin")
    a = p.parse_args()
    use_numpy(not a.no_numpy)
    lib = open_bench_library(a.lib)
    if not a.serve:
        print(json.dumps(run(lib, a.frame, a.iters, a.threads)))
        return
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            reply = run(lib, int(req["frame"]), int(req["iters"]), int(req["threads"]))
        except Exception as e:
            reply = {"error": repr(e)}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
