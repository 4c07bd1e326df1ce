# The Python half of the real-XLA host (@deno-xla/ffi/xla).
#
# Run once in the hosted interpreter's __main__ (xla_ffi_deno_py_run mode 0)
# together with distributed.py; src/xla/_bridge_py.ts then calls
# _deno_xla_bridge with the NumPy names of the XLA FFI data types (from
# native/abi_facts.h) and keeps the dispatcher it returns as
# _deno_xla_dispatch, which every later request calls with the addresses of a
# request and a reply buffer (mode 1). Requests and replies are laid out by
# src/xla/_codec.ts: a JSON header, then array data at 64-byte aligned
# offsets; the header of each request and reply is typed in
# src/xla/_protocol.ts. The dispatcher never lets an exception escape: errors
# become an error reply (type, message, traceback), so Python prints nothing
# over the user's output unless the host was opened with tracebacks: true.
#
# This file is embedded, not read at run time: `deno task embed` copies it
# into src/xla/_python.generated.ts.

def _deno_xla_bridge(numpy_names, ml_dtypes_names):
    """Defines the bridge; returns its dispatcher.

    numpy_names and ml_dtypes_names map XLA_FFI_DataType values to the names
    of their NumPy types in numpy and in ml_dtypes.
    """
    import ctypes, gc, itertools, json, os, re, struct, sys, threading, traceback

    # Module-level state of the bridge, shared by every Xla host of the process.
    S = {
        "hosts": {},        # host id -> {"programs": {id: Program}, "ffi": {key: fn}, "ns": dict}
        "pending": {},      # token -> (json bytes, [arrays]) of replies that did not fit
        "ids": itertools.count(1),
        "flags": None,      # XLA_FLAGS jax was imported with
        "x64": None,
        "tracebacks": False,
        # Target names whose programs go to a worker (Xla.register says so: a stage is a TS
        # entry point, or offThread was asked for), and a count of such registrations: a
        # program calling none of them is dispatched on the JS thread by run and ffiCall
        # (fast_call, DISPATCH).
        "off_thread": set(),
        "off_gen": 0,
        # Calls dispatched on the JS thread, and those of them whose results a worker waited for.
        "dispatched": 0,
        "dispatch_waited": 0,
        # Bumped when what a prepared call keeps may have changed (programs, plans or hosts
        # released, a program's or an ffi_call's function replaced, a plan's results' types
        # learnt anew, a target registered): what prepared calls kept (Ctx, and the native
        # path's copies of it) is looked up again.
        "epoch": 0,
    }
    # Shared with native/python_host.c, which reads and writes them with the GIL held:
    # [0] the epoch (a copy of S["epoch"]), [1] calls the native path dispatched on the JS
    # thread, [2] calls the native path ran.
    NATIVE = (ctypes.c_int64 * 4)()

    def invalidate():
        S["epoch"] += 1
        NATIVE[0] = S["epoch"]
    np = None
    jax = None

    # XLA_FFI_DataType values (xla::PrimitiveType) and their NumPy types
    # (native/abi_facts.h): NumPy's own, and ml_dtypes'.
    NAMES = numpy_names
    ML = ml_dtypes_names
    DT = {}     # DataType -> numpy dtype
    BACK = {}   # numpy dtype -> DataType

    def load_dtypes():
        for code, name in NAMES.items():
            DT[code] = np.dtype(name)
        try:
            import ml_dtypes
            for code, name in ML.items():
                t = getattr(ml_dtypes, name, None)
                if t is not None:
                    DT[code] = np.dtype(t)
        except ImportError:
            pass
        for code, dt in DT.items():
            BACK[dt] = code

    def np_dtype(code):
        dt = DT.get(code)
        if dt is None:
            raise TypeError("data type %d has no NumPy equivalent in this Python" % code)
        return dt

    def code_of(dt):
        c = BACK.get(np.dtype(dt))
        if c is None:
            raise TypeError("result data type %s has no XLA FFI data type" % dt)
        return c

    class Fail(Exception):
        """An error with an XLA status code chosen by the bridge."""
        def __init__(self, code, message):
            super().__init__(message)
            self.code = code

    # A memoryview over foreign memory (no ctypes array type per size: those are cached forever).
    from_memory = ctypes.pythonapi.PyMemoryView_FromMemory
    from_memory.restype = ctypes.py_object
    from_memory.argtypes = (ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_int)
    PYBUF_WRITE = 0x200

    def view(addr, size):
        return from_memory(addr, size, PYBUF_WRITE) if size else memoryview(bytearray())

    def read_args(mv, specs, base):
        out = []
        for a in specs:
            dt = np_dtype(a["dtype"])
            shape = tuple(a["shape"])
            n = 1
            for d in shape:
                n *= d
            if n:
                arr = np.frombuffer(mv, dtype=dt, count=n, offset=base + a["offset"])
            else:
                arr = np.zeros(0, dt)
            # A copy: jax may keep (or alias) its input, and the request buffer is the caller's.
            out.append(arr.reshape(shape).copy())
        return out

    def write_reply(addr, cap, status, header, arrays=(), offsets=()):
        """Writes a reply; returns 0, or the bytes it needs when cap is too small."""
        body = json.dumps(header, separators=(",", ":")).encode()
        start = (16 + len(body) + 63) & ~63
        need = 16 + len(body)
        for o, a in zip(offsets, arrays):
            need = max(need, start + o + a.nbytes)
        if need > cap:
            return need
        mv = view(addr, cap)
        mv[0:4] = status.to_bytes(4, "little", signed=True)
        mv[4:8] = len(body).to_bytes(4, "little")
        mv[8:16] = (0).to_bytes(8, "little")
        mv[16:16 + len(body)] = body
        for o, a in zip(offsets, arrays):
            if a.nbytes:
                ctypes.memmove(addr + start + o, a.ctypes.data, a.nbytes)
        return 0

    def results_reply(addr, cap, leaves):
        arrays = []
        metas = []
        offsets = []
        off = 0
        for leaf in leaves:
            a = np.asarray(leaf)
            if not a.flags.c_contiguous:
                a = a.copy(order="C")  # (ascontiguousarray would make a 0-d array 1-d)
            arrays.append(a)
            offsets.append(off)
            metas.append({"dtype": code_of(a.dtype), "shape": list(a.shape), "offset": off})
            off = (off + a.nbytes + 63) & ~63
        reply(addr, cap, {"results": metas}, arrays, offsets)

    def reply(addr, cap, header, arrays=(), offsets=()):
        """Writes a reply (status 0); one that does not fit is kept for a take request, and the
        reply says so (status 2, its token, and the bytes it needs): no reply has a limit."""
        need = write_reply(addr, cap, 0, header, arrays, offsets)
        if need:
            token = next(S["ids"])
            S["pending"][token] = (header, arrays, offsets)
            write_reply(addr, cap, 2, {"pending": token})
            view(addr, 16)[8:16] = need.to_bytes(8, "little")

    def error_reply(addr, cap, e, interrupted=False):
        code = e.code if isinstance(e, Fail) else None
        msg = str(e)
        tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
        if S["tracebacks"]:
            sys.stderr.write(tb)
            sys.stderr.flush()
        header = {"type": type(e).__name__, "module": type(e).__module__, "message": msg,
                  "traceback": tb}
        if code is not None:
            header["code"] = code
        if interrupted:  # a SIGINT (Ctrl-C) Python turned into KeyboardInterrupt
            header["interrupted"] = True
        if write_reply(addr, cap, 1, header):
            header["traceback"] = tb[-2000:]
            header["message"] = msg[:max(0, cap - 4096)]
            if write_reply(addr, cap, 1, header):
                header["traceback"] = ""
                header["message"] = msg[:max(0, (cap - 200) // 8)]
                write_reply(addr, cap, 1, header)

    # ---- attributes --------------------------------------------------------------

    class HDict(dict):
        """A nested attribute dictionary: hashable, as jax wants its parameters."""
        def __hash__(self):
            return hash(frozenset(self.items()))

    def attr(a, nested):
        k = a["k"]
        if k == "s":
            dt = np_dtype(a["t"])
            if dt.kind == "b":
                return np.bool_(bool(a["v"]))
            # The value's little-endian bytes: a NaN's payload and sign as they were given.
            return np.frombuffer(bytes.fromhex(a["x"]), dtype=dt.newbyteorder("<"))[0]
        if k == "a":
            dt = np_dtype(a["t"])
            arr = np.frombuffer(bytes.fromhex(a["x"]), dtype=dt.newbyteorder("<")).astype(dt)
            if nested:
                from jax._src.hashable_array import HashableArray
                return HashableArray(arr)
            return arr
        if k == "str":
            return a["v"]
        if k == "d":
            return HDict((n, attr(v, True)) for n, v in a["v"])
        raise Fail(3, "unknown attribute kind %r" % k)

    def attrs_of(lst):
        return {n: attr(v, False) for n, v in lst}

    # ---- operations ----------------------------------------------------------------

    def host(h):
        st = S["hosts"].get(h["host"])
        if st is None:
            raise Fail(9, "The Xla host is closed")
        return st

    def op_init(h, mv):
        nonlocal np, jax
        for k, v in h["env"].items():
            os.environ[k] = v
        flags = " ".join(x for x in [os.environ.get("XLA_FLAGS", "")] + h["xlaFlags"] if x)
        if S["flags"] is None:
            if flags:
                os.environ["XLA_FLAGS"] = flags
            sys.path[:] = h["sysPath"]
            sys.executable = h["executable"]
            if not getattr(sys, "argv", None):
                sys.argv = [h["executable"]]
            import numpy
            np = numpy
            import jax as jax_module
            jax = jax_module
            import jax.numpy, jax.ffi, jax.extend  # noqa: F401
            jax.config.update("jax_enable_x64", bool(h["x64"]))
            # A distributed job is joined before the backend starts (src/xla/_distributed.ts).
            _deno_xla_distributed_join(jax, h.get("distributed"), False)
            jax.devices()  # start the backend: registrations then apply at once
            load_dtypes()
            S["flags"] = flags
            S["x64"] = bool(h["x64"])
        else:
            _deno_xla_distributed_join(jax, h.get("distributed"), True)
            if h["xlaFlags"] and flags != S["flags"]:
                raise Fail(9, "jax was already imported in this process with XLA_FLAGS=%r; "
                              "XLA flags apply only before the first import (asked for %r)"
                              % (S["flags"], flags))
            if bool(h["x64"]) != S["x64"]:
                raise Fail(9, "jax already runs with x64 %s in this process"
                              % ("enabled" if S["x64"] else "disabled"))
        S["tracebacks"] = S["tracebacks"] or bool(h["tracebacks"])
        hid = next(S["ids"])
        ns = {"jax": jax, "jnp": jax.numpy, "np": np, "lax": jax.lax, "ffi": jax.ffi,
              "__name__": "__deno_xla__", "__builtins__": __builtins__}
        S["hosts"][hid] = {"programs": {}, "ffi": {}, "ns": ns, "modules": {}, "plans": {}}
        ns["program"] = lambda pid: S["hosts"][hid]["programs"][pid].fn
        import jaxlib
        api = [None, None]
        try:
            with open(os.path.join(jax.ffi.include_dir(), "xla", "ffi", "api", "c_api.h")) as f:
                text = f.read()
            ma = re.search(r"#define XLA_FFI_API_MAJOR (\d+)", text)
            mi = re.search(r"#define XLA_FFI_API_MINOR (\d+)", text)
            if ma and mi:
                api = [int(ma.group(1)), int(mi.group(1))]
        except OSError:
            pass
        return {"host": hid, "jax": jax.__version__, "jaxlib": jaxlib.__version__, "ffiApi": api,
                "distributed": _deno_xla_distributed_info(jax, hid),
                "python": sys.version.split()[0], "devices": len(jax.devices()),
                "platform": jax.devices()[0].platform, "xlaFlags": S["flags"], "x64": S["x64"]}

    def capsule(addr):
        return jax.ffi.pycapsule(ctypes.cast(addr, ctypes.c_void_p))

    def op_register(h, mv):
        host(h)
        stages = h["stages"]
        if list(stages) == ["execute"]:
            fn = capsule(stages["execute"])
        else:
            fn = {k: capsule(v) for k, v in stages.items()}
        kw = {}
        if h.get("traits"):
            kw["traits"] = h["traits"]
        jax.ffi.register_ffi_target(h["name"], fn, platform=h["platform"], **kw)
        if h.get("offThread"):
            S["off_thread"].add(h["name"])
            S["off_gen"] += 1
            invalidate()
        return {}

    def ffi_fn(h):
        """The jitted ffi_call of a request's signature, made once and cached by its key."""
        st = host(h)
        fn = st["ffi"].get(h["key"])
        if fn is None:
            results = [jax.ShapeDtypeStruct(tuple(r["shape"]), np_dtype(r["dtype"]))
                       for r in h["results"]]
            aliases = {a: r for a, r in h.get("aliases") or ()} or None
            call = jax.ffi.ffi_call(h["name"], results, vmap_method=h.get("vmapMethod"),
                                    has_side_effect=bool(h.get("hasSideEffect")),
                                    input_output_aliases=aliases,
                                    input_layouts=h.get("inputLayouts"),
                                    output_layouts=h.get("outputLayouts"))
            attrs = attrs_of(h["attrs"])
            fn = jax.jit(lambda *xs: call(*xs, **attrs))
            st["ffi"][h["key"]] = fn
        return fn

    def op_ffi_call(h, mv):
        return ffi_fn(h)(*read_args(mv, h["args"], h["_base"]))

    # Handlers a Python extension module hands out (jaxlib's LAPACK, nanobind examples):
    # registrations() is {name: capsule | {stage: capsule}} (jaxlib.cpu._lapack) or
    # {platform: [(name, capsule | {stage: capsule}, api_version)]} (jaxlib.lapack), as
    # jax._src.lax.linalg.register_module_custom_calls and jax.ffi.register_ffi_target take.
    capsule_name = ctypes.pythonapi.PyCapsule_GetName
    capsule_name.restype = ctypes.c_char_p
    capsule_name.argtypes = (ctypes.py_object,)
    capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    capsule_pointer.restype = ctypes.c_void_p
    capsule_pointer.argtypes = (ctypes.py_object, ctypes.c_char_p)
    target_capsule = b"xla._CUSTOM_CALL_TARGET"

    def capsule_address(c):
        if type(c).__name__ != "PyCapsule":
            return None, "is a %s, not a PyCapsule" % type(c).__name__
        n = capsule_name(c)
        if n != target_capsule:
            return None, ("is a PyCapsule named %r, not %r"
                          % (n.decode() if n is not None else None, target_capsule.decode()))
        return capsule_pointer(c, n), None

    def op_handlers_from(h, mv):
        st = host(h)
        import importlib
        name = h["module"]
        mod = importlib.import_module(name)
        st["modules"][name] = mod  # kept while the host is open (CPython never unloads it)
        init = h.get("initialize")
        if init:
            f = getattr(mod, init, None)
            if not callable(f):
                raise Fail(5, "%s has no function %s() to initialize it" % (name, init))
            f()
        regs_attr = h.get("registrations") or "registrations"
        f = getattr(mod, regs_attr, None)
        if not callable(f):
            raise Fail(5, "%s has no function %s() handing out its handlers" % (name, regs_attr))
        regs = f()
        if not isinstance(regs, dict):
            raise Fail(3, "%s.%s() returned a %s, not a dict"
                          % (name, regs_attr, type(regs).__name__))
        want = h.get("platform") or "cpu"
        if not any(isinstance(v, list) and all(isinstance(t, (list, tuple)) for t in v)
                   for v in regs.values()):
            form = "flat"
            rows = [(want, k, v, 1) for k, v in regs.items()]
        else:
            form = "platforms"
            rows = []
            for plat, targets in regs.items():
                if not isinstance(targets, (list, tuple)):
                    raise Fail(3, "%s.%s()[%r] is %r, not a list of (name, capsule, api_version)"
                                  % (name, regs_attr, plat, targets))
                for t in targets:
                    if len(t) not in (2, 3) or not isinstance(t[-1] if len(t) == 3 else 1, int):
                        raise Fail(3, "%s.%s()[%r] holds %r, not (name, capsule, api_version)"
                                      % (name, regs_attr, plat, t))
                    rows.append((str(plat), t[0], t[1], t[2] if len(t) == 3 else 1))
        handlers, skipped, platforms = [], [], sorted({r[0] for r in rows})
        seen = {}  # (platform, name) -> the stages first listed, as XLA's registry keeps them
        for plat, tname, fn, api in rows:
            if want != "*" and plat.lower() != want.lower():
                continue
            entry = {"name": str(tname), "platform": plat, "apiVersion": int(api)}
            if int(api) != 1:
                skipped.append(dict(entry, reason="a legacy custom call (api_version %d), "
                                    "not an XLA FFI handler" % int(api)))
                continue
            stages = fn if isinstance(fn, dict) else {"execute": fn}
            out, why = {}, None
            for stage, c in stages.items():
                addr, why = capsule_address(c)
                if why is not None:
                    why = "its %s stage %s" % (stage, why) if isinstance(fn, dict) else why
                    break
                out[str(stage)] = addr
            if why is None and not out.get("execute"):
                why = "has no execute stage"
            if why is not None:
                skipped.append(dict(entry, reason=why))
                continue
            first = seen.get((plat.lower(), entry["name"]))
            if first is not None:
                if first == out:
                    continue  # the same handler listed again: XLA accepts it, one is enough
                shown = lambda st: "{%s}" % ", ".join("%s: %#x" % kv for kv in sorted(st.items()))
                raise Fail(3, "Duplicate FFI handler registration for %s on platform %s with "
                              "different bundle addresses: %s.%s() lists it twice, as %s and %s"
                              % (entry["name"], plat, name, regs_attr, shown(first), shown(out)))
            seen[(plat.lower(), entry["name"])] = out
            handlers.append(dict(entry, stages=out))
        return {"module": name, "file": getattr(mod, "__file__", None), "form": form,
                "platforms": platforms, "handlers": handlers, "skipped": skipped}

    def op_register_type(h, mv):
        host(h)
        reg = {"type_id": capsule(h["typeId"])}
        if h.get("typeInfo"):
            reg["type_info"] = capsule(h["typeInfo"])
        jax.ffi.register_ffi_type(h["name"], reg, platform=h["platform"])
        return {}

    def op_clear_cache(h, mv):
        st = host(h)
        st["ffi"].clear()
        for plan in st["plans"].values():
            plan.ffi = None
        invalidate()
        gc.collect()
        return {}

    def op_clear_program(h, mv):
        st = host(h)
        p = st["programs"].get(h["id"])
        if p is None:
            raise Fail(9, "The program is closed")
        p.fn = p.make()
        invalidate()
        gc.collect()
        return {}

    def find_entry(ns, before, entry, source_kind):
        if entry:
            fn = ns.get(entry)
            if fn is None or not callable(fn):
                raise Fail(3, "The program defines no function %r" % entry)
            return fn
        import types
        new = [k for k, v in ns.items() if before.get(k, ns) is not v and not k.startswith("_")
               and (isinstance(v, types.FunctionType) or hasattr(v, "lower"))
               and getattr(v, "__module__", "__deno_xla__") == "__deno_xla__"]
        if len(new) == 1:
            return ns[new[0]]
        if not new:
            raise Fail(3, "The program defines no function: define one, or name it with entry")
        raise Fail(3, "The program defines several functions (%s): name the one to run with entry"
                   % ", ".join(new))

    class Program:
        __slots__ = ("fn", "kind", "outputs", "make", "source")

    def op_compile(h, mv):
        st = host(h)
        p = Program()
        p.outputs = None
        p.source = None
        if h["kind"] == "stablehlo":
            from jax._src.lib import xla_client as xc
            backend = jax.extend.backend.get_backend("cpu")
            devs = backend.local_devices()[:1]
            dev = devs[0]
            def make_hlo():
                exe = backend.compile_and_load(h["source"],
                                               executable_devices=xc.DeviceList(tuple(devs)),
                                               compile_options=xc.CompileOptions())
                def run_exe(*xs):
                    return exe.execute([jax.device_put(x, dev) for x in xs])
                return run_exe
            p.fn = make_hlo()
            p.make = make_hlo
            p.kind = "stablehlo"
            p.source = h["source"]
        elif h["kind"] == "exported":
            load_exported(p, h, mv)
        else:
            ns = dict(st["ns"])  # what runPython defined is visible, not changed
            before = dict(ns)
            code = compile(h["source"], h.get("filename") or "<xla.jit>", "exec")
            exec(code, ns)
            fn = find_entry(ns, before, h.get("entry"), "python")
            jitted = jax.jit(fn, static_argnums=tuple(h.get("staticArgnums") or ()))
            if h.get("argSpecs") is not None:
                specs = [jax.ShapeDtypeStruct(tuple(a["shape"]), np_dtype(a["dtype"]))
                         for a in h["argSpecs"]]
                compiled = jitted.lower(*specs).compile()
                p.outputs = [{"dtype": code_of(o.dtype), "shape": list(o.shape)}
                             for o in jax.tree_util.tree_leaves(compiled.out_info)]
                p.fn = compiled
                p.make = lambda: jitted.lower(*specs).compile()
            else:
                p.fn = jitted
                def make_jitted():
                    jitted.clear_cache()
                    return jitted
                p.make = make_jitted
            p.kind = "python"
        pid = next(S["ids"])
        st["programs"][pid] = p
        return {"id": pid, "outputs": p.outputs}

    def load_exported(p, h, mv):
        """A program serialized by jax.export: the request's one U8 argument."""
        a = h["args"][0]
        start = h["_base"] + a["offset"]
        data = bytearray(mv[start:start + a["shape"][0]])
        try:
            from jax import export as jexport
            exp = jexport.deserialize(data)
        except ImportError as e:
            raise Fail(14, "jax cannot read a model serialized by jax.export in this Python (%s)"
                           % e)
        except Exception as e:  # noqa: B902 - any failure to read is the bytes' fault
            t = type(e)
            kind = t.__name__ if t.__module__ == "builtins" else "%s.%s" % (t.__module__, t.__name__)
            raise Fail(3, "The bytes are not a model serialized by jax.export: "
                          "jax.export.deserialize said %s: %s" % (kind, e))
        in_tree = exp.in_tree
        def flat(*leaves):
            # The leaves of the exported function's (args, kwargs), in jax's flattening order.
            args, kwargs = jax.tree_util.tree_unflatten(in_tree, leaves)
            return exp.call(*args, **kwargs)
        jitted = jax.jit(flat)
        concrete = all(isinstance(d, int) for v in exp.in_avals for d in v.shape)
        if concrete:
            specs = [jax.ShapeDtypeStruct(v.shape, v.dtype) for v in exp.in_avals]
            p.fn = jitted.lower(*specs).compile()
            p.outputs = [{"dtype": code_of(o.dtype), "shape": list(o.shape)}
                         for o in jax.tree_util.tree_leaves(p.fn.out_info)]
            p.make = lambda: jitted.lower(*specs).compile()
        else:  # symbolic dimensions: compiled per argument signature, at the first run
            p.fn = jitted
            def make_jitted():
                jitted.clear_cache()
                return jitted
            p.make = make_jitted
        p.kind = "exported"

    def op_run(h, mv):
        st = host(h)
        p = st["programs"].get(h["id"])
        if p is None:
            raise Fail(9, "The program is closed")
        out = p.fn(*read_args(mv, h["args"], h["_base"]))
        return jax.tree_util.tree_leaves(out)

    def op_take(h, mv):
        got = S["pending"].pop(h["token"], None)
        if got is None:
            raise Fail(5, "No pending reply %r" % h["token"])
        return got

    def op_release(h, mv):
        invalidate()
        st = S["hosts"].get(h["host"])
        if st is None:
            return {}
        if h.get("programs") is not None:
            for pid in h["programs"]:
                st["programs"].pop(pid, None)
            for k in [k for k, v in st["plans"].items() if v.program in h["programs"]]:
                del st["plans"][k]
        else:
            del S["hosts"][h["host"]]
            st["programs"].clear()
            st["ffi"].clear()
            st["plans"].clear()
            st["ns"].clear()
            st["modules"].clear()
            gc.collect()
            _deno_xla_distributed_leave(jax, h["host"])
        for t in h.get("tokens") or ():
            S["pending"].pop(t, None)
        gc.collect()
        return {}

    def op_python(h, mv):
        st = host(h)
        ns = st["ns"]
        ns.pop("result", None)
        exec(compile(h["source"], "<xla.python>", "exec"), ns)
        value = ns.pop("result", None)
        return {"result": json.loads(json.dumps(value, default=str))}

    def op_stats(h, mv):
        gc.collect()
        st = S["hosts"].get(h.get("host"))
        return {"allocatedBlocks": sys.getallocatedblocks(), "gcObjects": len(gc.get_objects()),
                "hosts": len(S["hosts"]), "programs": len(st["programs"]) if st else 0,
                "ffiCache": len(st["ffi"]) if st else 0, "pending": len(S["pending"]),
                "threads": threading.active_count(), "dispatched": S["dispatched"] + NATIVE[1],
                "dispatchWaited": S["dispatch_waited"], "nativeCalls": NATIVE[2]}

    # ---- prepared calls (the fast path of run, runSync and ffiCall) -------------------
    #
    # A plan is one program (or one cached ffi_call) with one argument signature,
    # made once by op_plan. A call of it is a binary request, no JSON and no
    # array data: little-endian 64-bit words
    #   [FAST | nargs << 32, host, plan, nouts, (address, bytes) * nargs,
    #    (address, bytes) * nouts]
    # The arguments are NumPy arrays over the caller's memory for the duration
    # of the call (no copy here); each result is copied once into the caller's
    # memory at its address, and the reply is status 4 with no header. Until
    # the caller knows the results' types (nouts 0), or when they differ from
    # what it expects, the results come back as a results reply instead.

    FAST = 0xFFFFFFFF

    class Plan:
        __slots__ = ("call", "program", "prog", "specs", "outs", "frames", "targets", "gen",
                     "inline", "ffi")

    # A custom call's target in StableHLO (`stablehlo.custom_call @name(`, quoted when the
    # name needs it, or `call_target_name = "name"` in the generic form) and in HLO text
    # (`custom_call_target="name"`).
    TARGET_RE = re.compile(r'custom_call\s*@(?:"((?:[^"\\]|\\.)*)"|([\w.$-]+))'
                           r'|call_target_name\s*=\s*"((?:[^"\\]|\\.)*)"'
                           r'|custom_call_target="((?:[^"\\]|\\.)*)"')

    def targets_of(plan):
        """The custom-call targets a plan's program names (compiled for its signature), or None
        when they cannot be read. Asked after the plan's first call: tracing is cached by then."""
        if plan.prog is None:
            return plan.targets
        p = plan.prog
        try:
            if p.kind == "stablehlo":
                text = p.source
            elif hasattr(p.fn, "lower"):
                text = p.fn.lower(*[jax.ShapeDtypeStruct(shape, dt)
                                    for dt, shape in plan.specs]).as_text()
            else:  # compiled for its argument specs
                text = p.fn.as_text()
        except Exception:  # noqa: B902 - unknown targets: never dispatched on the JS thread
            return None
        if not isinstance(text, str):
            return None
        return frozenset(a or b or c or d for a, b, c, d in TARGET_RE.findall(text))

    def dispatchable(plan):
        """Whether a plan's program calls no target that goes to a worker (as registered now)."""
        if plan.gen != S["off_gen"]:
            if plan.targets is False:
                plan.targets = targets_of(plan)
            t = plan.targets
            plan.inline = t is not None and not (t & S["off_thread"])
            plan.gen = S["off_gen"]
        return plan.inline

    # The type of jax's arrays (set by the first plan): a program returning one is not flattened.
    array_type = []

    def op_plan(h, mv):
        st = host(h)
        if h.get("program") is not None:
            pid = h["program"]
            if pid not in st["programs"]:
                raise Fail(9, "The program is closed")
            programs = st["programs"]
            program = pid
            def call(xs):
                p = programs.get(pid)
                if p is None:
                    raise Fail(9, "The program is closed")
                return jax.tree_util.tree_leaves(p.fn(*xs))
        else:
            program = None
            f = dict(h["ffi"], host=h["host"])
            def call(xs):
                # The jitted ffi_call, found once (clear_cache forgets it: found again).
                fn = plan.ffi
                if fn is None:
                    fn = plan.ffi = ffi_fn(f)
                return fn(*xs)
        plan = Plan()
        plan.ffi = None
        plan.call = call
        plan.program = program
        # The program itself: a call reads its fn (clear_program replaces it), no lookup.
        plan.prog = st["programs"][program] if program is not None else None
        if not array_type:
            array_type.append(type(jax.numpy.zeros(())))
        plan.specs = [(np_dtype(a["dtype"]), tuple(a["shape"])) for a in h["specs"]]
        plan.outs = None
        plan.frames = {}
        # Targets read at the first dispatch (False: not yet); an ffi_call's is its own name.
        plan.targets = False if program is not None else frozenset((h["ffi"]["name"],))
        plan.gen = -1
        plan.inline = False
        plan_id = next(S["ids"])
        st["plans"][plan_id] = plan
        return {"plan": plan_id}

    def array_at(addr, size, dt, shape):
        if not size:
            return np.zeros(shape, dt)
        return np.frombuffer(view(addr, size), dtype=dt).reshape(shape)

    words_of = {}   # address -> a request's words (the caller reuses its requests)

    # Flags of a binary request (the high half of its word 3). DISPATCH: run the plan on this
    # thread (the JS thread: run and ffiCall of a program that calls no TS target, nor one
    # registered offThread) and, when its results are not ready yet, keep them for a FINISH
    # request of the same reply buffer, sent from a worker. XLA's CPU client runs a program
    # inline on the calling thread when HloCostAnalysis counts under 1000 flops for it
    # (xla/pjrt/cpu/cpu_client.cc, cheap_computation_), else on its own threads: a custom call
    # on small arrays is such a cheap program, however long its handler takes. A plan calling a
    # target that goes to a worker is not run (status NOT_DISPATCHED): the caller sends it to one.
    # STABLE: the request's words are those of its buffer's last call (a Ctx holds what that
    # call found).
    DISPATCH, FINISH, STABLE = 1, 2, 4
    WRITTEN, DISPATCHED, NOT_DISPATCHED = 4, 5, 6
    # Reply address -> the leaves of a dispatched call whose results were not ready; its FINISH
    # takes them (a caller dispatches only while nothing else runs, so this stays small).
    waiting = {}

    class Ctx:
        """What a request buffer's last call found: a STABLE request (its words as they were at
        that call: the caller says so) takes it instead of looking each part up again."""
        __slots__ = ("plan", "args", "views", "outs", "reply", "status", "epoch")

    ctx_of = {}  # request address -> Ctx of its last call

    def fast_call(w, req_addr, reply_addr, reply_cap):
        word3 = w[3]
        flags = word3 >> 32
        c = ctx_of.get(req_addr) if flags & STABLE else None
        if (c is not None and c.epoch == S["epoch"] and c.reply == reply_addr
                and c.outs is c.plan.outs):
            plan = c.plan
            args, views, outs = c.args, c.views, c.outs
            nouts = len(views)
        else:
            plan, args, views, outs, nouts = find_call(w, word3, reply_addr)
            c = Ctx()
            c.plan, c.args, c.views, c.outs, c.reply = plan, args, views, outs, reply_addr
            c.status = view(reply_addr, 8).cast("i")
            c.epoch = S["epoch"]
            if len(ctx_of) > 4096:
                ctx_of.clear()
            ctx_of[req_addr] = c
        leaves = call_leaves(plan, args, flags, c.status, reply_addr)
        if leaves is None:
            return None
        written = finish_call(plan, leaves, views, outs, nouts, flags, c.status, reply_addr,
                              reply_cap)
        if written and flags & STABLE and not flags & FINISH:
            return kept(plan, args, leaves, w, nouts)
        return None

    # The native path (native/python_host.c, kept_run): a STABLE request whose last call
    # wrote its results is run by C the next time, with what this call found. C calls the
    # same function with the same arguments, checks each result as finish_call does (its
    # shape, and its type by the format of the buffer jax exports for it), and copies it with
    # the buffer protocol, which is how NumPy reads a jax array in finish_call's `v[...] = x`.
    # Whatever else happens (an exception, results of other types, a result jax exports no
    # buffer for, results not ready on the JS thread) goes to native_rest, which finishes the
    # call here as finish_call does. Results of a type with no buffer format (bfloat16, the
    # float8 types, the sub-byte integers) keep no native path.
    KEPT_OUTS, KEPT_DIMS = 8, 8
    pack = struct.pack

    def kept(plan, args, leaves, w, nouts):
        """What C keeps for a request: (function, arguments, jax's array type, packed words)."""
        if nouts > KEPT_OUTS:
            return None
        fn = plan.prog.fn if plan.prog is not None else plan.ffi
        if fn is None:
            return None
        nargs = w[0] >> 32
        parts = [pack("<qqqq", 1 if plan.prog is not None else 0,
                      1 if dispatchable(plan) else 0, nouts, 0)]
        for i, x in enumerate(leaves):
            try:
                m = memoryview(x)
            except Exception:  # noqa: BLE001 - a type jax exports no buffer for
                return None
            f = (m.format or "B").encode()
            if len(f) > 15 or m.ndim > KEPT_DIMS or not m.c_contiguous:
                return None
            o = 4 + 2 * (nargs + i)
            parts.append(pack("<Q3q8qQ16s", w[o], w[o + 1], m.itemsize, m.ndim,
                              *(tuple(m.shape) + (0,) * (KEPT_DIMS - m.ndim)), 0, f))
            m.release()
        return (fn, tuple(args), array_type[0], b"".join(parts))

    def native_rest(a, out, exc):
        """Finishes a call the native path made (out: what the function returned) or that
        raised (exc), as fast_call would have."""
        req_addr, req_len, reply_addr, reply_cap = a
        try:
            if exc is not None:
                raise exc
            w = fast_words(req_addr, req_len)
            word3 = w[3]
            plan, args, views, outs, nouts = find_call(w, word3, reply_addr)
            status = view(reply_addr, 8).cast("i")
            leaves = leaves_of(plan, out)
            finish_call(plan, leaves, views, outs, nouts, word3 >> 32, status, reply_addr,
                        reply_cap)
        except BaseException as e:  # noqa: B902 - everything becomes a reply
            fail(reply_addr, reply_cap, e)

    def find_call(w, word3, reply_addr):
        """The plan of a request and the arrays over its frame's memory."""
        nargs = w[0] >> 32
        st = S["hosts"].get(w[1])
        if st is None:
            waiting.pop(reply_addr, None)
            raise Fail(9, "The Xla host is closed")
        plan = st["plans"].get(w[2])
        if plan is None:
            waiting.pop(reply_addr, None)
            raise Fail(9, "The program is closed")
        nouts = word3 & 0xFFFFFFFF
        # The arrays over one frame's memory, found by its addresses and sizes as bytes (cheaper
        # to make and compare than a tuple of ints). They belong to the call: calls of a plan in
        # flight at once (each on its own frame, the GIL let go while XLA runs) never share them.
        key = w[4:4 + 2 * (nargs + nouts)].tobytes()
        frames = plan.frames
        outs = plan.outs
        at = frames.get(key)
        if at is None or at[2] is not outs:
            key_words = w[4:4 + 2 * (nargs + nouts)].tolist()
            args = [array_at(key_words[2 * i], key_words[2 * i + 1], dt, shape)
                    for i, (dt, shape) in enumerate(plan.specs)]
            o = 2 * nargs
            # A call made before its caller knew the results' types has no result addresses
            # (nouts 0): its results come back in the reply.
            views = [array_at(key_words[o + 2 * i], key_words[o + 2 * i + 1], dt, shape)
                     for i, (dt, shape) in enumerate((outs or ())[:nouts])]
            if len(frames) > 64:
                frames.clear()
            at = frames[key] = (args, views, outs)
        return plan, at[0], at[1], outs, nouts

    def leaves_of(plan, out):
        """The results of a plan's function, as a list of leaves."""
        if plan.prog is None:
            return out
        return (out,) if type(out) is array_type[0] else jax.tree_util.tree_leaves(out)

    def call_leaves(plan, args, flags, status, reply_addr):
        """Runs a plan's call (or takes a dispatched one's results): its leaves, or None when
        its reply is written (not dispatched)."""
        if flags & FINISH:
            leaves = waiting.pop(reply_addr, None)
            if leaves is None:
                raise Fail(13, "No call was dispatched with this reply buffer")
            return leaves
        if flags & DISPATCH:
            if not dispatchable(plan):
                status[0] = NOT_DISPATCHED
                status[1] = 0
                return None
            S["dispatched"] += 1
        prog = plan.prog
        if prog is None:
            return plan.call(args)
        return leaves_of(plan, prog.fn(*args))

    def finish_call(plan, leaves, views, outs, nouts, flags, status, reply_addr, reply_cap):
        """Writes a call's results (or keeps a dispatched call's that are not ready): whether
        they were written in place (status WRITTEN)."""
        if flags & DISPATCH and not flags & FINISH:
            for x in leaves:
                ready = getattr(x, "is_ready", None)
                if ready is not None and not ready():
                    waiting[reply_addr] = leaves
                    S["dispatch_waited"] += 1
                    status[0] = DISPATCHED
                    status[1] = 0
                    return False
        if nouts and outs is not None and len(leaves) == nouts:
            same = True
            for x, (dt, shape) in zip(leaves, outs):
                if getattr(x, "shape", None) != shape:
                    same = False
                    break
                xd = x.dtype
                if xd is not dt and xd != dt:
                    same = False
                    break
            if same:
                for v, x in zip(views, leaves):
                    v[...] = x  # (the types were checked: no cast; cheaper than np.copyto)
                status[0] = WRITTEN
                status[1] = 0
                return True
        leaves = list(leaves)
        plan.outs = [(np.asarray(x).dtype, tuple(np.shape(x))) for x in leaves]
        invalidate()
        results_reply(reply_addr, reply_cap, leaves)
        return False

    def fast_words(req_addr, req_len):
        """The words of a binary request, or None for a JSON one."""
        mv = view(req_addr, req_len)
        if req_len < 32 or int.from_bytes(mv[0:4], "little") != FAST:
            return None
        if len(words_of) > 4096:
            words_of.clear()
        w = words_of[req_addr] = mv.cast("Q")
        return w

    OPS = {"init": op_init, "plan": op_plan, "register": op_register, "ffi_call": op_ffi_call,
           "register_type": op_register_type, "clear_cache": op_clear_cache,
           "clear_program": op_clear_program,
           "compile": op_compile, "run": op_run, "take": op_take, "release": op_release,
           "python": op_python, "stats": op_stats, "handlers_from": op_handlers_from}

    def dispatch(req_addr, req_len, reply_addr, reply_cap):
        try:
            w = words_of.get(req_addr)
            # (The buffer may hold another request now, or be another buffer at that address.)
            if w is None or w.nbytes != req_len or w[0] & 0xFFFFFFFF != FAST:
                w = fast_words(req_addr, req_len)
            if w is not None:
                return fast_call(w, req_addr, reply_addr, reply_cap)
            mv = view(req_addr, req_len)
            n = int.from_bytes(mv[0:4], "little")
            h = json.loads(bytes(mv[8:8 + n]))
            h["_base"] = (8 + n + 63) & ~63
            op = OPS.get(h.get("op"))
            if op is None:
                raise Fail(3, "Unknown request %r" % h.get("op"))
            out = op(h, mv)
            if isinstance(out, dict):
                reply(reply_addr, reply_cap, out)
            elif isinstance(out, tuple):  # a pending reply taken again (asked at its size)
                if write_reply(reply_addr, reply_cap, 0, *out):
                    raise Fail(8, "The reply does not fit in %d bytes" % reply_cap)
            else:
                results_reply(reply_addr, reply_cap, list(out))
        except BaseException as e:  # noqa: B902 - everything becomes a reply
            fail(reply_addr, reply_cap, e)

    def fail(reply_addr, reply_cap, e):
        interrupted = isinstance(e, KeyboardInterrupt)
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            e = Fail(1, "%s: %s" % (type(e).__name__, e))
        error_reply(reply_addr, reply_cap, e, interrupted)

    # For native/python_host.c: the function that finishes what the native path cannot, and
    # the address of the words it shares with the bridge.
    dispatch.native = (native_rest, ctypes.addressof(NATIVE))
    return dispatch

