# Tests of the real-XLA host's Python (src/xla/python/): the dispatcher
# driven through request and reply buffers laid out as src/xla/_codec.ts lays
# them out, and the bridge's helpers reached through the dispatcher's
# closure. tests/xla_bridge_py_test.ts runs this file with XLA_FFI_DENO_PYTHON,
# giving in DENO_XLA_BRIDGE_SOURCE the path of the exact source the host runs
# (src/xla/_bridge_py.ts BRIDGE_SOURCE); alone (python -m unittest
# tests/python/test_bridge.py) it composes that source from the .py files
# and native/abi_facts.h itself.
#
# The tests that open a host import jax; the others need only the standard
# library (and numpy where they say so).

import ctypes
import json
import os
import re
import struct
import sys
import types
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def boot_source():
    """The Python the host runs once: the .py files and the call that makes the dispatcher."""
    path = os.environ.get("DENO_XLA_BRIDGE_SOURCE")
    if path:
        with open(path, encoding="utf-8") as f:
            return f.read()
    with open(os.path.join(ROOT, "native", "abi_facts.h"), encoding="utf-8") as f:
        facts = f.read()
    names = {"NUMPY": {}, "ML_DTYPES": {}}
    for value, numpy, module in re.findall(
            r'X\(\w+, (\d+), \d+, \d+, \w+, "(\w*)", (\w+)\)', facts):
        if module in names:
            names[module][int(value)] = numpy
    parts = []
    for name in ("bridge.py", "distributed.py"):
        with open(os.path.join(ROOT, "src", "xla", "python", name), encoding="utf-8") as f:
            parts.append(f.read())
    parts.append("_deno_xla_dispatch = _deno_xla_bridge(%r, %r)\ndel _deno_xla_bridge\n"
                 % (names["NUMPY"], names["ML_DTYPES"]))
    return "\n".join(parts)


SOURCE = boot_source()


def load():
    """A fresh bridge: the namespace the boot source ran in (as __main__'s)."""
    ns = {"__name__": "__main__", "__builtins__": __builtins__}
    exec(compile(SOURCE, "<bridge>", "exec"), ns)
    return ns


def closure(fn):
    """The variables a nested function of the bridge closes over, by name."""
    return {n: c.cell_contents for n, c in zip(fn.__code__.co_freevars, fn.__closure__ or ())}


def align64(n):
    return (n + 63) & ~63


class Reply:
    def __init__(self, raw):
        self.raw = raw
        self.status = int.from_bytes(raw[0:4], "little", signed=True)
        n = int.from_bytes(raw[4:8], "little")
        self.need = int.from_bytes(raw[8:16], "little")
        self.header = json.loads(raw[16:16 + n]) if n else {}
        self.data_start = align64(16 + n)

    def array(self, i, np):
        m = self.header["results"][i]
        dt = {11: np.float32, 4: np.int32, 12: np.float64, 5: np.int64}[m["dtype"]]
        count = 1
        for d in m["shape"]:
            count *= d
        start = self.data_start + m["offset"]
        return np.frombuffer(self.raw, dtype=dt, count=count, offset=start).reshape(m["shape"])


def call(dispatch, header, arrays=(), cap=65536, raw_json=None):
    """Sends one request as the TS host does; returns the Reply."""
    specs, off = [], 0
    for code, a in arrays:
        specs.append({"dtype": code, "shape": list(a.shape), "offset": off})
        off = align64(off + a.nbytes)
    body = raw_json if raw_json is not None else json.dumps(dict(header, args=specs)).encode()
    base = align64(8 + len(body))
    req = bytearray(base + off)
    req[0:4] = len(body).to_bytes(4, "little")
    req[8:8 + len(body)] = body
    for spec, (_, a) in zip(specs, arrays):
        req[base + spec["offset"]:base + spec["offset"] + a.nbytes] = a.tobytes()
    rbuf = (ctypes.c_char * len(req)).from_buffer(req)
    reply = ctypes.create_string_buffer(cap)
    dispatch(ctypes.addressof(rbuf), len(req), ctypes.addressof(reply), cap)
    return Reply(reply.raw)


# Capsules as extension modules hand them out (the names must outlive them).
_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
TARGET = ctypes.create_string_buffer(b"xla._CUSTOM_CALL_TARGET")
OTHER = ctypes.create_string_buffer(b"other.name")
_cells = [ctypes.c_int(i) for i in range(4)]


def capsule(i, name=TARGET):
    return _new_capsule(ctypes.addressof(_cells[i]), ctypes.addressof(name), None)


def address(i):
    return ctypes.addressof(_cells[i])


HOST_OPS = ["register", "ffi_call", "register_type", "clear_cache", "clear_program", "compile",
            "run", "python", "handlers_from", "plan"]


class WireTest(unittest.TestCase):
    """What needs no jax: the reply layout, errors, state of the process."""

    def setUp(self):
        self.ns = load()
        self.dispatch = self.ns["_deno_xla_dispatch"]
        self.parts = closure(self.dispatch)

    def test_main_gets_only_the_dispatcher_and_the_distributed_half(self):
        names = sorted(k for k in self.ns if not k.startswith("__"))
        self.assertEqual(names, ["_deno_xla_dispatch", "_deno_xla_distributed_info",
                                 "_deno_xla_distributed_join", "_deno_xla_distributed_key",
                                 "_deno_xla_distributed_leave", "_deno_xla_job"])

    def test_the_ops_table(self):
        self.assertEqual(sorted(self.parts["OPS"]), sorted(
            ["init", "take", "release", "stats"] + HOST_OPS))

    def test_unknown_op_is_an_error_reply_with_code_3(self):
        r = call(self.dispatch, {"op": "nope"})
        self.assertEqual(r.status, 1)
        self.assertEqual(r.header["code"], 3)
        self.assertEqual(r.header["type"], "Fail")
        self.assertEqual(r.header["message"], "Unknown request 'nope'")
        self.assertIn("Traceback", r.header["traceback"])
        self.assertNotIn("interrupted", r.header)

    def test_a_malformed_header_is_an_error_reply_without_a_code(self):
        r = call(self.dispatch, None, raw_json=b"{not json")
        self.assertEqual(r.status, 1)
        self.assertEqual(r.header["type"], "JSONDecodeError")
        self.assertEqual(r.header["module"], "json.decoder")
        self.assertNotIn("code", r.header)

    def test_stats_without_a_host(self):
        r = call(self.dispatch, {"op": "stats"})
        self.assertEqual(r.status, 0)
        self.assertEqual({k: r.header[k] for k in ("hosts", "programs", "ffiCache", "pending")},
                         {"hosts": 0, "programs": 0, "ffiCache": 0, "pending": 0})
        self.assertGreater(r.header["allocatedBlocks"], 0)
        self.assertGreaterEqual(r.header["threads"], 1)

    def test_take_of_an_unknown_token_is_not_found(self):
        r = call(self.dispatch, {"op": "take", "token": 7})
        self.assertEqual((r.status, r.header["code"], r.header["message"]),
                         (1, 5, "No pending reply 7"))

    def test_release_of_a_host_that_is_gone_is_no_error(self):
        r = call(self.dispatch, {"op": "release", "host": 12345})
        self.assertEqual((r.status, r.header), (0, {}))
        r = call(self.dispatch, {"op": "release", "host": 12345, "programs": [1]})
        self.assertEqual((r.status, r.header), (0, {}))

    def test_every_host_op_on_a_closed_host_fails_precondition(self):
        for op in HOST_OPS:
            r = call(self.dispatch, {"op": op, "host": 999})
            self.assertEqual((r.status, r.header.get("code"), r.header["message"]),
                             (1, 9, "The Xla host is closed"), op)

    def test_an_error_reply_fits_a_small_buffer(self):
        # (dispatch reaches error_reply through fail, which native_rest shares.)
        error_reply = closure(self.parts["fail"])["error_reply"]
        Fail = self.parts["Fail"]
        for cap, kept in ((8192, 8192 - 4096), (600, (600 - 200) // 8)):
            try:
                raise Fail(13, "x" * 100000)
            except Fail as e:
                buf = ctypes.create_string_buffer(cap)
                error_reply(ctypes.addressof(buf), cap, e)
            r = Reply(buf.raw)
            self.assertEqual((r.status, r.header["code"]), (1, 13))
            self.assertEqual(r.header["message"], "x" * kept, cap)

    def test_write_reply_says_what_it_needs_and_writes_nothing_when_short(self):
        write_reply = self.parts["write_reply"]
        buf = ctypes.create_string_buffer(b"\xee" * 64, 64)
        need = write_reply(ctypes.addressof(buf), 64, 0, {"text": "y" * 100})
        body = len(json.dumps({"text": "y" * 100}, separators=(",", ":")))
        self.assertEqual(need, 16 + body)
        self.assertEqual(buf.raw, b"\xee" * 64)
        buf = ctypes.create_string_buffer(4096)
        self.assertEqual(write_reply(ctypes.addressof(buf), 4096, 0, {"a": [1, 2]}), 0)
        r = Reply(buf.raw)
        self.assertEqual((r.status, r.need, r.header), (0, 0, {"a": [1, 2]}))

    def test_capsule_addresses(self):
        capsule_address = closure(self.parts["OPS"]["handlers_from"])["capsule_address"]
        self.assertEqual(capsule_address(capsule(0)), (address(0), None))
        self.assertEqual(capsule_address(5), (None, "is a int, not a PyCapsule"))
        self.assertEqual(capsule_address(capsule(1, OTHER)),
                         (None, "is a PyCapsule named 'other.name', not "
                                "'xla._CUSTOM_CALL_TARGET'"))


class FakeJax:
    """What the distributed half calls of jax, recorded."""

    def __init__(self):
        self.calls = []
        self.config = types.SimpleNamespace(update=lambda *a: self.calls.append(("config",) + a))
        self.distributed = types.SimpleNamespace(
            initialize=lambda **kw: self.calls.append(("initialize", kw)),
            shutdown=lambda: self.calls.append(("shutdown",)))
        self.process_index = lambda: 1
        self.process_count = lambda: 2
        self.local_device_count = lambda: 1
        self.device_count = lambda: 2


CFG = {"coordinator": "127.0.0.1:12355", "numProcesses": 2, "processId": 1, "timeoutS": 7,
       "localDeviceIds": [0], "bindAddress": "127.0.0.1:12355", "cpuCollectives": "gloo",
       "handshake": True}


class DistributedTest(unittest.TestCase):
    def setUp(self):
        self.ns = load()
        self.jax = FakeJax()

    def join(self, cfg, started=False):
        return self.ns["_deno_xla_distributed_join"](self.jax, cfg, started)

    def test_no_job(self):
        self.assertIsNone(self.join(None))
        self.assertIsNone(self.ns["_deno_xla_distributed_info"](self.jax, 1))
        self.ns["_deno_xla_distributed_leave"](self.jax, 1)
        self.assertEqual(self.jax.calls, [])

    def test_join_passes_the_options_to_jax(self):
        self.assertIs(self.join(CFG), CFG)
        self.assertEqual(self.jax.calls, [
            ("config", "jax_cpu_collectives_implementation", "gloo"),
            ("initialize", {"coordinator_address": "127.0.0.1:12355", "num_processes": 2,
                            "process_id": 1, "initialization_timeout": 7,
                            "heartbeat_timeout_seconds": 7, "shutdown_timeout_seconds": 7,
                            "coordinator_bind_address": "127.0.0.1:12355",
                            "local_device_ids": [0]})])

    def test_no_collectives_and_defaults(self):
        cfg = dict(CFG, cpuCollectives="none", bindAddress=None, localDeviceIds=None)
        self.join(cfg)
        self.assertEqual([c[0] for c in self.jax.calls], ["initialize"])
        self.assertNotIn("local_device_ids", self.jax.calls[0][1])
        self.assertNotIn("coordinator_bind_address", self.jax.calls[0][1])

    def test_one_job_per_process(self):
        self.join(CFG)
        self.assertIs(self.join(dict(CFG)), CFG)  # the same job again: joined already
        self.assertIs(self.join(None, True), CFG)
        with self.assertRaisesRegex(RuntimeError, "^FAILED_PRECONDITION: this process already "
                                                  "is process 1 of 2"):
            self.join(dict(CFG, processId=0))

    def test_a_started_backend_cannot_join(self):
        with self.assertRaisesRegex(RuntimeError, "^FAILED_PRECONDITION: jax already started"):
            self.join(CFG, True)

    def test_the_last_host_leaves_and_no_job_follows(self):
        self.join(CFG)
        info = self.ns["_deno_xla_distributed_info"]
        self.assertEqual(info(self.jax, 1)["processCount"], 2)
        info(self.jax, 2)
        leave = self.ns["_deno_xla_distributed_leave"]
        leave(self.jax, 1)
        self.assertNotIn(("shutdown",), self.jax.calls)
        leave(self.jax, 2)
        self.assertEqual(self.jax.calls[-1], ("shutdown",))
        with self.assertRaisesRegex(RuntimeError, "left its distributed jax job"):
            self.join(None)


def have_jax():
    try:
        import jax  # noqa: F401
        return True
    except ImportError:
        return False


@unittest.skipUnless(have_jax(), "jax is not installed for this Python")
class HostTest(unittest.TestCase):
    """A host opened with jax (CPU): programs, results, pending replies, attributes."""

    @classmethod
    def setUpClass(cls):
        import numpy
        cls.np = numpy
        cls.ns = load()
        cls.dispatch = staticmethod(cls.ns["_deno_xla_dispatch"])
        r = call(cls.ns["_deno_xla_dispatch"], {"op": "init", "env": {"JAX_PLATFORMS": "cpu"}, "xlaFlags": [],
                                "x64": True, "tracebacks": False, "sysPath": list(sys.path),
                                "executable": sys.executable, "distributed": None})
        assert r.status == 0, r.header
        cls.info = r.header
        cls.host = r.header["host"]

    def send(self, header, arrays=(), cap=65536):
        return call(self.dispatch, dict(header, host=self.host), arrays, cap)

    def ok(self, header, arrays=(), cap=65536):
        r = self.send(header, arrays, cap)
        self.assertEqual(r.status, 0, r.header)
        return r

    def test_init_reply(self):
        h = self.info
        self.assertIsInstance(h["host"], int)
        self.assertEqual((h["platform"], h["x64"], h["distributed"]), ("cpu", True, None))
        self.assertGreaterEqual(h["devices"], 1)
        self.assertEqual(h["python"], sys.version.split()[0])
        self.assertTrue(all(isinstance(v, int) for v in h["ffiApi"]), h["ffiApi"])

    def test_a_second_init_with_other_x64_fails(self):
        r = call(self.dispatch, {"op": "init", "env": {}, "xlaFlags": [], "x64": False,
                                 "tracebacks": False, "sysPath": list(sys.path),
                                 "executable": sys.executable, "distributed": None})
        self.assertEqual((r.status, r.header["code"]), (1, 9))
        self.assertIn("x64 enabled", r.header["message"])

    def test_python_result_and_namespace(self):
        self.assertEqual(self.ok({"op": "python", "source": "kept = 3\nresult = [kept, 'a']"})
                         .header, {"result": [3, "a"]})
        self.assertEqual(self.ok({"op": "python", "source": "result = kept + 1"}).header,
                         {"result": 4})
        self.assertEqual(self.ok({"op": "python", "source": "x = 1"}).header, {"result": None})
        self.assertEqual(self.ok({"op": "python", "source": "result = {1, 2}"}).header,
                         {"result": "{1, 2}"})

    def test_interrupts_and_exits_become_code_1(self):
        r = self.send({"op": "python", "source": "raise KeyboardInterrupt"})
        self.assertEqual((r.status, r.header["code"], r.header.get("interrupted")), (1, 1, True))
        self.assertEqual(r.header["message"], "KeyboardInterrupt: ")
        r = self.send({"op": "python", "source": "raise SystemExit(4)"})
        self.assertEqual((r.status, r.header["code"], r.header["message"]),
                         (1, 1, "SystemExit: 4"))
        self.assertNotIn("interrupted", r.header)

    def compile(self, source, **kw):
        h = {"op": "compile", "kind": "python", "source": source, "entry": None,
             "argSpecs": None, "filename": None}
        h.update(kw)
        return self.send(h)

    def test_compile_and_run(self):
        np = self.np
        r = self.compile("def f(x):\n    return x * 2, jnp.sum(x)\n",
                         argSpecs=[{"dtype": 11, "shape": [3]}])
        self.assertEqual(r.status, 0, r.header)
        self.assertEqual(r.header["outputs"], [{"dtype": 11, "shape": [3]},
                                               {"dtype": 11, "shape": []}])
        pid = r.header["id"]
        x = np.array([1, 2, 3], np.float32)
        out = self.ok({"op": "run", "id": pid}, [(11, x)])
        self.assertEqual(out.header["results"], [{"dtype": 11, "shape": [3], "offset": 0},
                                                 {"dtype": 11, "shape": [], "offset": 64}])
        self.assertEqual(out.array(0, np).tolist(), [2, 4, 6])
        self.assertEqual(out.array(1, np).tolist(), 6)
        self.ok({"op": "clear_program", "id": pid})
        self.assertEqual(self.ok({"op": "run", "id": pid}, [(11, x)]).array(1, np).tolist(), 6)
        self.ok({"op": "release", "programs": [pid]})
        r = self.send({"op": "run", "id": pid}, [(11, x)])
        self.assertEqual((r.status, r.header["code"], r.header["message"]),
                         (1, 9, "The program is closed"))

    def test_a_repeated_request_hands_its_call_to_the_native_path(self):
        # A binary request (src/xla/_prepared.ts): its results' memory, then its words.
        np = self.np
        r = self.compile("def f(x):\n    return x + 1, (x * 2).astype(jnp.int32)\n",
                         argSpecs=[{"dtype": 11, "shape": [3]}])
        pid = r.header["id"]
        plan = self.ok({"op": "plan", "program": pid, "ffi": None,
                        "specs": [{"dtype": 11, "shape": [3]}]}).header["plan"]
        x = np.array([1, 2, 3], np.float32)
        y, z = np.zeros(3, np.float32), np.zeros(3, np.int32)
        words = np.zeros(4 + 2 * 3, np.uint64)
        words[0:4] = [0xFFFFFFFF | (1 << 32), self.host, plan, 2]
        words[4:10] = [x.ctypes.data, 12, y.ctypes.data, 12, z.ctypes.data, 12]
        reply = ctypes.create_string_buffer(65536)
        status = np.frombuffer(reply, np.int32, 2)

        def send(flags):
            words[3] = (int(words[3]) & 0xFFFFFFFF) | (flags << 32)
            return self.dispatch(words.ctypes.data, words.nbytes, ctypes.addressof(reply), 65536)

        self.assertIsNone(send(0))  # the plan's first call: a results reply
        self.assertEqual(status[0], 0)
        self.assertIsNone(send(0))  # written in place; not STABLE: nothing handed back
        self.assertEqual((status[0], y.tolist(), z.tolist()), (4, [2, 3, 4], [2, 4, 6]))
        x[0] = 5
        kept = send(4)  # STABLE: written, and what the call found handed back
        self.assertEqual((status[0], y.tolist()), (4, [6, 3, 4]))
        fn, args, array_type, packed = kept
        self.assertEqual(len(args), 1)
        self.assertIs(type(fn(*args)[0]), array_type)
        head = struct.unpack_from("<qqqq", packed)
        self.assertEqual(head, (1, 1, 2, 0))  # a program, dispatchable, two results
        outs = [struct.unpack_from("<Q3q8qQ16s", packed, 32 + 120 * i) for i in range(2)]
        self.assertEqual([(o[0], o[1], o[2], o[3], o[4]) for o in outs],
                         [(y.ctypes.data, 12, 4, 1, 3), (z.ctypes.data, 12, 4, 1, 3)])
        # The formats jax's buffer protocol gives its arrays (PEP 3118, standard sizes).
        self.assertEqual([o[13].rstrip(b"\0") for o in outs], [b"=f", b"=i"])
        # What the native path cannot finish, the bridge does, as its own call would have.
        rest = self.dispatch.native[0]
        a = (words.ctypes.data, words.nbytes, ctypes.addressof(reply), 65536)
        y[:] = 0
        rest(a, fn(*args), None)
        self.assertEqual((status[0], y.tolist(), z.tolist()), (4, [6, 3, 4], [10, 4, 6]))
        rest(a, None, ValueError("no"))
        r = Reply(reply.raw)
        self.assertEqual((r.status, r.header["type"], r.header["message"]), (1, "ValueError", "no"))
        # A result jax exports no buffer for (bfloat16): nothing handed back.
        r = self.compile("def f(x):\n    return x.astype(jnp.bfloat16)\n",
                         argSpecs=[{"dtype": 11, "shape": [3]}])
        plan = self.ok({"op": "plan", "program": r.header["id"], "ffi": None,
                        "specs": [{"dtype": 11, "shape": [3]}]}).header["plan"]
        words[0:4] = [0xFFFFFFFF | (1 << 32), self.host, plan, 1]
        words[4:8] = [x.ctypes.data, 12, y.ctypes.data, 6]
        send(0)
        send(0)
        self.assertIsNone(send(4))
        self.assertEqual(status[0], 4)
        self.ok({"op": "release", "programs": [pid, r.header["id"]]})

    def test_which_function_a_source_compiles(self):
        r = self.compile("def f(x):\n    return x\ndef g(x):\n    return x\n")
        self.assertEqual((r.status, r.header["code"]), (1, 3))
        self.assertIn("several functions (f, g)", r.header["message"])
        r = self.compile("y = 1\n")
        self.assertEqual((r.status, r.header["code"]), (1, 3))
        r = self.compile("def f(x):\n    return x\ndef g(x):\n    return x + 1\n", entry="g")
        self.assertEqual(r.status, 0, r.header)
        r = self.compile("def f(x):\n    return x\n", entry="h")
        self.assertEqual((r.status, r.header["message"]),
                         (1, "The program defines no function 'h'"))
        r = self.compile("def f(x) return x\n", filename="mine.py")
        self.assertEqual((r.status, r.header["type"]), (1, "SyntaxError"))
        self.assertIn("mine.py", r.header["traceback"])

    def test_a_reply_that_does_not_fit_waits_for_take(self):
        np = self.np
        pid = self.compile("def f(x):\n    return jnp.arange(100000, dtype=jnp.int32) + x\n",
                           ).header["id"]
        x = np.array(1, np.int32)
        r = self.send({"op": "run", "id": pid}, [(4, x)], cap=4096)
        self.assertEqual(r.status, 2)
        self.assertGreater(r.need, 4096)
        token = r.header["pending"]
        stats = self.ok({"op": "stats"}).header
        self.assertEqual(stats["pending"], 1)
        r = call(self.dispatch, {"op": "take", "token": token}, cap=r.need)
        self.assertEqual(r.status, 0)
        self.assertEqual(r.array(0, np)[[0, -1]].tolist(), [1, 100000])
        r = call(self.dispatch, {"op": "take", "token": token})
        self.assertEqual((r.status, r.header["code"]), (1, 5))
        self.ok({"op": "release", "programs": [pid]})

    def test_attributes(self):
        np = self.np
        ffi_fn = closure(closure(self.dispatch)["OPS"]["ffi_call"])["ffi_fn"]
        attrs_of = closure(ffi_fn)["attrs_of"]
        # Numeric values travel as the hex of their little-endian bytes ("x").
        got = attrs_of([
            ["b", {"k": "s", "t": 1, "v": True}],
            ["big", {"k": "s", "t": 5, "x": "0100000000002000"}],
            ["d", {"k": "d", "v": [["arr", {"k": "a", "t": 4, "x": "0100000002000000"}],
                                   ["name", {"k": "str", "v": "x"}]]}],
            ["f", {"k": "s", "t": 11, "x": "000080ff"}],
            ["z", {"k": "s", "t": 12, "x": "0000000000000080"}],
            ["xs", {"k": "a", "t": 11, "x": "0000c03f0100807f"}],
        ])
        self.assertIs(type(got["b"]), np.bool_)
        self.assertEqual((got["big"], got["big"].dtype), (9007199254740993, np.int64))
        self.assertEqual((float(got["f"]), got["f"].dtype), (float("-inf"), np.float32))
        self.assertEqual(str(got["z"]), "-0.0")
        self.assertEqual(got["xs"].dtype, np.float32)
        self.assertTrue(np.isnan(got["xs"][1]))
        # A signalling NaN's bits pass unchanged.
        self.assertEqual(got["xs"].view(np.uint32)[1], 0x7f800001)
        self.assertEqual(got["d"]["name"], "x")
        self.assertEqual(type(got["d"]["arr"]).__name__, "HashableArray")
        hash(got["d"])  # jax hashes its parameters
        with self.assertRaisesRegex(Exception, "unknown attribute kind 'q'") as cm:
            attrs_of([["q", {"k": "q"}]])
        self.assertEqual(cm.exception.code, 3)

    def handlers_from(self, module, **kw):
        h = {"op": "handlers_from", "module": module, "initialize": None, "registrations": None,
             "platform": "cpu"}
        h.update(kw)
        return self.send(h)

    def test_handlers_from_a_flat_registrations_dict(self):
        mod = types.ModuleType("deno_xla_test_flat")
        mod.registrations = lambda: {"one": capsule(0),
                                     "staged": {"execute": capsule(1), "prepare": capsule(2)},
                                     "foreign": capsule(3, OTHER), "plain": 5}
        sys.modules[mod.__name__] = mod
        r = self.handlers_from(mod.__name__)
        self.assertEqual(r.status, 0, r.header)
        h = r.header
        self.assertEqual((h["form"], h["platforms"], h["file"]), ("flat", ["cpu"], None))
        self.assertEqual(h["handlers"], [
            {"name": "one", "platform": "cpu", "apiVersion": 1,
             "stages": {"execute": address(0)}},
            {"name": "staged", "platform": "cpu", "apiVersion": 1,
             "stages": {"execute": address(1), "prepare": address(2)}}])
        self.assertEqual([(s["name"], s["reason"]) for s in h["skipped"]], [
            ("foreign", "is a PyCapsule named 'other.name', not 'xla._CUSTOM_CALL_TARGET'"),
            ("plain", "is a int, not a PyCapsule")])

    def test_handlers_from_registrations_by_platform(self):
        mod = types.ModuleType("deno_xla_test_platforms")
        mod.ready = False
        mod.initialize = lambda: setattr(mod, "ready", True)
        mod.targets = lambda: {"cpu": [("new", capsule(0), 1), ("old", capsule(1), 0)],
                               "CUDA": [("gpu", capsule(2))]}
        sys.modules[mod.__name__] = mod
        r = self.handlers_from(mod.__name__, initialize="initialize", registrations="targets")
        self.assertEqual(r.status, 0, r.header)
        self.assertTrue(mod.ready)
        h = r.header
        self.assertEqual((h["form"], h["platforms"]), ("platforms", ["CUDA", "cpu"]))
        self.assertEqual([t["name"] for t in h["handlers"]], ["new"])
        self.assertEqual(h["skipped"], [{
            "name": "old", "platform": "cpu", "apiVersion": 0,
            "reason": "a legacy custom call (api_version 0), not an XLA FFI handler"}])
        r = self.handlers_from(mod.__name__, registrations="targets", platform="*")
        self.assertEqual([t["name"] for t in r.header["handlers"]], ["new", "gpu"])

    def test_handlers_from_what_is_not_a_handler_module(self):
        r = self.handlers_from("json")
        self.assertEqual((r.status, r.header["code"], r.header["message"]),
                         (1, 5, "json has no function registrations() handing out its handlers"))
        r = self.handlers_from("json", initialize="nope")
        self.assertEqual((r.status, r.header["code"]), (1, 5))
        r = self.handlers_from("json", registrations="dumps")
        self.assertEqual((r.status, r.header["type"]), (1, "TypeError"))
        r = self.handlers_from("deno_xla_no_such_module")
        self.assertEqual((r.status, r.header["type"]), (1, "ModuleNotFoundError"))

    def test_zz_release_closes_the_host(self):
        # Runs last (unittest sorts by name): the host is gone afterwards.
        before = self.ok({"op": "stats"}).header["hosts"]
        self.ok({"op": "release"})
        self.assertEqual(call(self.dispatch, {"op": "stats"}).header["hosts"], before - 1)
        r = self.send({"op": "python", "source": "result = 1"})
        self.assertEqual((r.status, r.header["code"]), (1, 9))


if __name__ == "__main__":
    unittest.main()
