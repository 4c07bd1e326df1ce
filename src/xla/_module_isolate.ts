/**
 * A Python extension module's handlers in a child process: the isolated
 * process of `HandlerLibrary.open(path, { isolate })` (native/isolate_child.c),
 * told to host the configured Python (`$XLA_FFI_DENO_PYTHON`) instead of
 * loading a shared library. It imports the module, calls its initializer and
 * reads its `registrations()` as {@link Xla.handlersFrom} does, so that a
 * crash of one of its handlers is an error of the call (`fuzzHandler(h, {
 * isolate: true })`, `cli fuzz --python-module`). Its extension's shared
 * object cannot be opened on its own: it needs the interpreter's symbols.
 *
 * @module
 */
import { ErrorCode } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import { HandlerLibrary } from "../runtime/handler_library.ts";
import type { IsolateOptions } from "../runtime/isolate.ts";
import type { HandlersFromOptions } from "./modules.ts";
import { findPython, probePython } from "./interpreter.ts";

/**
 * The Python text the child runs in its `__main__` (python_host.c, mode 0):
 * it defines `_deno_xla_dispatch`, whose one answer (mode 1) is the status
 * (0, or 1 for an error) and the text: `name<TAB>address` lines (other
 * stages than execute as `name:stage`), or why the module gave none.
 */
const BOOT = `
def _deno_xla_isolate_boot(cfg):
    import ctypes, importlib, sys
    sys.path[:] = cfg["sysPath"]
    sys.executable = cfg["executable"]
    if not getattr(sys, "argv", None):
        sys.argv = [cfg["executable"]]
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype = ctypes.c_char_p
    get_name.argtypes = (ctypes.py_object,)
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype = ctypes.c_void_p
    get_pointer.argtypes = (ctypes.py_object, ctypes.c_char_p)
    name = cfg["module"]
    try:
        mod = importlib.import_module(name)
        init = cfg.get("initialize")
        if init:
            f = getattr(mod, init, None)
            if not callable(f):
                raise LookupError("%s has no function %s() to initialize it" % (name, init))
            f()
        attr = cfg.get("registrations") or "registrations"
        f = getattr(mod, attr, None)
        if not callable(f):
            raise LookupError("%s has no function %s() handing out its handlers" % (name, attr))
        regs = f()
        want = (cfg.get("platform") or "cpu").lower()
        if any(isinstance(v, list) and all(isinstance(t, (list, tuple)) for t in v)
               for v in regs.values()):
            rows = [(str(p), t[0], t[1], t[2] if len(t) == 3 else 1)
                    for p, ts in regs.items() for t in ts]
        else:
            rows = [(want, k, v, 1) for k, v in regs.items()]
        lines = []
        for plat, tname, fn, api in rows:
            if (want != "*" and plat.lower() != want) or int(api) != 1:
                continue
            stages = fn if isinstance(fn, dict) else {"execute": fn}
            for stage, c in stages.items():
                if type(c).__name__ != "PyCapsule" or get_name(c) != b"xla._CUSTOM_CALL_TARGET":
                    continue
                key = str(tname) if stage == "execute" else "%s:%s" % (tname, stage)
                lines.append("%s\\t%d" % (key, get_pointer(c, b"xla._CUSTOM_CALL_TARGET")))
        status, text = 0, "\\n".join(lines)
    except BaseException as e:  # noqa: B902 - the reason goes back to the parent
        status, text = 1, ("The isolated process could not take the handlers of the Python "
                           "module %s: %s: %s" % (name, type(e).__name__, e))
    data = text.encode()

    def dispatch(req, n, reply, cap):
        k = min(len(data), cap - 17)
        head = status.to_bytes(4, "little") + k.to_bytes(4, "little") + bytes(8)
        ctypes.memmove(reply, head + data[:k], 16 + k)

    return dispatch

`;

const MODULE_NAME = /^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$/;

/**
 * @internal Opens the handlers of Python module `module` in an isolated
 * process (started at the first handler lookup, again after it died): the
 * interpreter is `python` (default `$XLA_FFI_DENO_PYTHON`, else `python3`),
 * `from` what {@link Xla.handlersFrom} would be asked with. Its handlers
 * are looked up by their registered names.
 *
 * @example
 * ```ts ignore
 * using lib = await _openModuleIsolated("jaxlib.cpu._sparse", {}, { timeoutMs: 2000 });
 * const h = lib.handler("cpu_csr_sparse_dense_ffi"); // a crash in it is an FfiError
 * ```
 */
export async function _openModuleIsolated(
  module: string,
  from: HandlersFromOptions,
  options: IsolateOptions,
  python?: string,
): Promise<HandlerLibrary> {
  if (typeof module !== "string" || !MODULE_NAME.test(module)) {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `A Python module name must be dotted identifiers, got ${JSON.stringify(module)}`,
    );
  }
  const info = await probePython(findPython(python));
  if (info.library === null) {
    throw new FfiError(
      ErrorCode.UNAVAILABLE,
      `The Python at ${info.executable} (${info.version}) has no shared libpython to host ` +
        `in the isolated process of ${module}`,
    );
  }
  const cfg = {
    module,
    initialize: from.initialize ?? null,
    registrations: from.registrations ?? null,
    platform: from.platform ?? "cpu",
    sysPath: info.sysPath,
    executable: info.executable,
  };
  const boot = BOOT +
    `import json as _j\n_deno_xla_dispatch = _deno_xla_isolate_boot(_j.loads(${
      JSON.stringify(JSON.stringify(cfg))
    }))\n`;
  return HandlerLibrary._openPython(options, {
    module,
    env: {
      XLA_FFI_DENO_ISOLATE_PYTHON: info.library,
      XLA_FFI_DENO_ISOLATE_PYTHON_HOME: info.home,
      XLA_FFI_DENO_ISOLATE_PYTHON_BOOT: boot,
    },
  });
}
