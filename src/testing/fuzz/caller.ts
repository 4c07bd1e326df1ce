/**
 * What calls the fuzzed handler: a shared library's in its child process
 * (with a fresh instantiated state per call when asked), a Python module's
 * in a child process that hosts the module, or a handler object in this
 * process; and the command line's attribute values as `ffiCall` attributes.
 *
 * @module
 */
import { ErrorCode, ExecutionStage } from "../../abi/enums.ts";
import { FfiError, toFfiError } from "../../errors.ts";
import type { AttrDictionary as CliAttrs, AttrValue } from "../../spec/grammar.ts";
import { array, type AttrDictionary, type AttrInput, scalar } from "../../runtime/attributes.ts";
import type { ArrayInput, ArraySpec } from "../../runtime/ffi_call.ts";
import { HandlerLibrary, type HandlerRef } from "../../runtime/handler_library.ts";
import { _INSTANCE_FRESH, _INSTANCE_KEEP, type IsolatedOutput } from "../../runtime/isolate.ts";
import { CallFrameBuilder } from "../../runtime/call_frame.ts";
import { Runtime } from "../../runtime/runtime.ts";
import { type HandlersFromOptions, ModuleHandler } from "../../xla/modules.ts";
import { _openModuleIsolated } from "../../xla/_module_isolate.ts";
import type { FuzzOptions, FuzzTarget } from "./types.ts";

/** What one call came to. */
export interface _Outcome {
  ok: boolean;
  error?: FfiError;
  results?: ArrayBufferView[];
}

/** A Python module's handler to run in a child process that hosts the module, or undefined. */
function _moduleTarget(
  target: FuzzTarget,
  options: FuzzOptions,
): { module: string; handler: string; from: HandlersFromOptions } | undefined {
  if (
    "module" in target && typeof target.module === "string" && !(target instanceof ModuleHandler)
  ) {
    const t = target as {
      module: string;
      handler: unknown;
      initialize?: string;
      platform?: string;
    };
    if (typeof t.handler !== "string" || t.handler === "") {
      throw new FfiError(ErrorCode.INVALID_ARGUMENT, "fuzzHandler: target.handler is empty");
    }
    const from: HandlersFromOptions = {};
    if (t.initialize !== undefined) from.initialize = t.initialize;
    if (t.platform !== undefined) from.platform = t.platform;
    return { module: t.module, handler: t.handler, from };
  }
  if (options.isolate === true && target instanceof ModuleHandler) {
    return { module: target.module, handler: target.name!, from: target._from };
  }
  return undefined;
}

/** The handler and what calls it, in a child process for a library or a Python module. */
export class _Caller {
  #lib: HandlerLibrary | null = null;
  #rt: Runtime;
  #handler!: HandlerRef;
  /** The library's instantiate handler: each call gets a fresh state from it first. */
  #instantiate: HandlerRef | null = null;
  readonly library?: string;
  readonly name?: string;
  /** A Python module's handler: the module and what it is asked with. */
  readonly module?: { name: string; from: HandlersFromOptions };
  readonly isolated: boolean;

  /** The caller of `target` (a Python module's is opened first: the interpreter is asked). */
  static async open(target: FuzzTarget, options: FuzzOptions): Promise<_Caller> {
    const m = _moduleTarget(target, options);
    if (m === undefined) {
      if (options.isolate === true && !("library" in target)) {
        throw new FfiError(
          ErrorCode.INVALID_ARGUMENT,
          "fuzzHandler: isolate moves a Python module's handler (Xla.handlersFrom) to a child " +
            "process; a TS handler runs in this process, a shared library's handler " +
            "({ library, handler }) always in its own",
        );
      }
      return new _Caller(target, options);
    }
    if (options.instantiate !== undefined || (options.stateTypes ?? []).length > 0) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        "fuzzHandler: instantiate and stateTypes are for a shared library's handler",
      );
    }
    if (options.sanitize !== undefined) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        "fuzzHandler: sanitize is for a shared library built with the sanitizer, not a Python " +
          "module's handler",
      );
    }
    const lib = await _openModuleIsolated(m.module, m.from, {
      timeoutMs: options.timeoutMs ?? 1000,
      output: options.handlerOutput ?? "keep",
    });
    return new _Caller(target, options, { lib, ...m });
  }

  private constructor(
    target: FuzzTarget,
    options: FuzzOptions,
    module?: {
      lib: HandlerLibrary;
      module: string;
      handler: string;
      from: HandlersFromOptions;
    },
  ) {
    this.#rt = new Runtime({ threads: 0 });
    try {
      if (module !== undefined) {
        this.#lib = module.lib;
        this.module = { name: module.module, from: module.from };
        this.name = module.handler;
        this.isolated = true;
        this.#handler = this.#lib.handler(module.handler);
      } else if ("library" in target && typeof target.library === "string") {
        if (typeof target.handler !== "string" || target.handler === "") {
          throw new FfiError(ErrorCode.INVALID_ARGUMENT, "fuzzHandler: target.handler is empty");
        }
        this.library = target.library;
        this.name = target.handler;
        this.#lib = HandlerLibrary.open(target.library, {
          isolate: {
            timeoutMs: options.timeoutMs ?? 1000,
            output: options.handlerOutput ?? "keep",
            ...(options.sanitize ? { sanitize: options.sanitize } : {}),
          },
        });
        this.#handler = this.#lib.handler(target.handler);
        this.isolated = true;
        const minor = Number(this.#rt.apiVersion.slice(2));
        for (const t of options.stateTypes ?? []) {
          this.#lib._isolatedProcess!.registerType(t, minor);
        }
        if (options.instantiate !== undefined) {
          this.#instantiate = this.#lib.handler(options.instantiate);
        }
      } else {
        if (options.instantiate !== undefined || (options.stateTypes ?? []).length > 0) {
          throw new FfiError(
            ErrorCode.INVALID_ARGUMENT,
            "fuzzHandler: instantiate and stateTypes are for a library's handler",
          );
        }
        this.#handler = target as HandlerRef;
        this.isolated = false;
      }
    } catch (e) {
      this.close();
      throw e;
    }
  }

  async call(
    args: readonly ArrayInput[],
    results: readonly ArraySpec[],
    attrs: AttrDictionary,
    guard: boolean,
  ): Promise<_Outcome> {
    const process = this.#lib?._isolatedProcess;
    try {
      if (this.#instantiate !== null && process !== undefined) {
        // As XLA does, the instantiate stage gets the attributes only; a fresh state per call.
        process.instance = _INSTANCE_FRESH;
        using frame = new CallFrameBuilder().attrs(attrs).build();
        await this.#rt.call(this.#instantiate, frame, { stage: ExecutionStage.INSTANTIATE });
        process.instance = _INSTANCE_KEEP;
      }
      // A signature without results is still called: jax would drop it without a side effect.
      const out = await this.#rt.ffiCall(this.#handler, {
        args,
        results,
        attrs,
        guard,
        hasSideEffect: true,
      });
      return { ok: true, results: out as ArrayBufferView[] };
    } catch (e) {
      return { ok: false, error: toFfiError(e) };
    } finally {
      if (process !== undefined) process.instance = 0;
    }
  }

  /** What the library's handlers wrote since the last time asked (kept output). */
  output(): IsolatedOutput {
    return this.#lib?.isolatedOutput() ?? { bytes: 0, lines: 0, head: "" };
  }

  close(): void {
    try {
      this.#rt.close();
    } finally {
      this.#lib?.close();
      this.#lib = null;
    }
  }
}

/** ffiCall attributes of the command line's attribute values. */
export function _ffiAttrs(dict: CliAttrs): Record<string, AttrInput> {
  const out: Record<string, AttrInput> = {};
  for (const [name, v] of dict.entries) out[name] = _ffiAttr(v);
  return out;
}

function _ffiAttr(v: AttrValue): AttrInput {
  switch (v.kind) {
    case "string":
      return v.value;
    case "scalar":
      return scalar(v.dtype, v.value);
    case "array":
      return array(v.dtype, v.values);
    case "dictionary":
      return _ffiAttrs(v);
  }
}
