/**
 * `Runtime.ffiCall`'s machinery: the stages of the target, the handler
 * instances kept per signature, the call frames it builds, its results (on
 * the host, or through device buffers on a CUDA runtime). Private to the
 * runtime.
 *
 * @module
 */
import { type DataType, ErrorCode, ExecutionStage } from "../abi/enums.ts";
import { byteWidth, type DataTypedArray, viewAs } from "../abi/dtype.ts";
import { FfiError } from "../errors.ts";
import type { AttrDictionary } from "./attributes.ts";
import { type CallFrame, CallFrameBuilder } from "./call_frame.ts";
import type { DeviceBuffer } from "./device_buffer.ts";
import {
  _attrsKey,
  _checkAliases,
  _checkCallOptions,
  _identity,
  _normaliseArg,
  _normaliseSpec,
  _resultStorage,
  type ArrayInput,
  type FfiCallOptions,
  type FfiCallTarget,
} from "./ffi_call.ts";
import {
  _asHandlerOrStages,
  _isStages,
  _stageHandler,
  type HandlerRef,
  type HandlerStages,
} from "./handler_library.ts";
import { _newInstance, type Instance } from "./instance.ts";
import { _argsInLayout, _checkLayouts, _resultsFromLayout } from "./_layout.ts";
import type { CallOptions, Runtime } from "./runtime.ts";

/** What ffiCall needs of its runtime, private parts included. */
export interface _FfiCallRuntime {
  /** Throws FAILED_PRECONDITION when the runtime is closed. */
  live(): void;
  /** The bundle registered under `name` (through the runtime's cache). */
  named(name: string): HandlerStages;
  /** Calls one stage as `Runtime.call` does, with hints about implicit attributes. */
  call(target: FfiCallTarget, frame: CallFrame, options: CallOptions | undefined): Promise<void>;
  /** Refuses a handler whose API version the runtime would not register, with its message. */
  checkVersion(handler: HandlerRef, name: string): void;
  /** The runtime's device copies when it runs on CUDA, null on Host. */
  readonly cuda: Pick<Runtime, "deviceArg" | "deviceBuffer" | "toHost"> | null;
}

/** ffiCall on one runtime, and the handler instances it keeps per signature. */
export class _FfiCalls {
  readonly #rt: _FfiCallRuntime;
  readonly #instances = new Map<string, Instance>();
  /** Execute handlers whose API version was checked. */
  readonly #checked = new WeakSet<object>();

  constructor(rt: _FfiCallRuntime) {
    this.#rt = rt;
  }

  /** `Runtime.ffiCall`. */
  async call(target: FfiCallTarget, options: FfiCallOptions): Promise<DataTypedArray[]> {
    const rt = this.#rt;
    rt.live();
    _checkCallOptions(options);
    let args = (options.args ?? []).map((a, i) => _normaliseArg(a, `argument ${i}`));
    const specs = options.results.map((r, i) => _normaliseSpec(r, `result ${i}`));
    const aliases = _checkAliases(options.inputOutputAliases, args, specs);
    const layouts = _checkLayouts(
      options.inputLayouts,
      options.outputLayouts,
      args,
      specs,
      aliases,
    );
    const bundle = this.#bundle(target);
    let instance: Instance | undefined;
    if (bundle.instantiate) {
      const key = JSON.stringify([
        typeof target === "string" ? target : _identity(target),
        args.map((a) => [a.dtype, a.shape]),
        specs,
        _attrsKey(options.attrs),
        aliases,
        layouts,
      ]);
      instance = this.#instances.get(key);
      if (instance === undefined) {
        instance = await this.#instantiate(target, options.attrs);
        this.#instances.set(key, instance);
      }
    }
    const run = async (frame: CallFrame) => {
      for (const stage of [ExecutionStage.PREPARE, ExecutionStage.INITIALIZE] as const) {
        if (_stageHandler(bundle, stage) === null) continue;
        await rt.call(target, frame, { stage, instance });
      }
      await rt.call(target, frame, instance ? { instance } : undefined);
    };
    // The handler gets (and writes) the bytes of the layouts XLA would give it.
    if (layouts !== null) args = _argsInLayout(args, layouts);
    if (rt.cuda !== null) {
      const outs = await this.#callCuda(rt.cuda, args, specs, aliases, options, run);
      return layouts === null ? outs : _resultsFromLayout(outs, specs, layouts);
    }
    const outs = specs.map((r, i) =>
      viewAs(
        r.dtype,
        _resultStorage(r.shape.reduce((a, b) => a * b, 1) * byteWidth(r.dtype), `result ${i}`),
      )
    );
    const inputs: ArrayInput[] = args.map((a) => ({
      data: a.bytes,
      shape: a.shape,
      dtype: a.dtype,
    }));
    for (const [a, r] of aliases) {
      const out = outs[r]!;
      new Uint8Array(out.buffer, out.byteOffset, out.byteLength).set(args[a]!.bytes);
      inputs[a] = { data: out, shape: args[a]!.shape, dtype: args[a]!.dtype };
    }
    using frame = buildFrame(inputs, outs, specs, options.attrs, options.guard === true);
    await run(frame);
    return layouts === null ? outs : _resultsFromLayout(outs, specs, layouts);
  }

  /**
   * ffiCall on CUDA: arguments copied to device buffers, results allocated
   * there (an aliased one is its argument's copy), copied back after the
   * call once the runtime's stream is done.
   */
  async #callCuda(
    device: Pick<Runtime, "deviceArg" | "deviceBuffer" | "toHost">,
    args: readonly { dtype: DataType; shape: number[]; bytes: Uint8Array }[],
    specs: readonly { dtype: number; shape: number[] }[],
    aliases: readonly [number, number][],
    options: FfiCallOptions,
    run: (frame: CallFrame) => Promise<void>,
  ): Promise<DataTypedArray[]> {
    const owned: DeviceBuffer[] = [];
    try {
      const inputs = args.map((a) => {
        const d = device.deviceArg(a.bytes, a.shape, a.dtype);
        owned.push(d);
        return d;
      });
      const aliasOf = new Map(aliases.map(([a, r]) => [r, a]));
      const rets = specs.map((r, i) => {
        const a = aliasOf.get(i);
        if (a !== undefined) return inputs[a]!;
        const d = device.deviceBuffer(r.dtype, r.shape);
        owned.push(d);
        return d;
      });
      using frame = buildFrame(inputs, rets, specs, options.attrs, options.guard === true);
      await run(frame);
      return rets.map((d) => device.toHost(d));
    } finally {
      for (const d of owned) d.close();
    }
  }

  /** The stages ffiCall calls: a registered name's bundle, a bundle, or one handler. */
  #bundle(target: FfiCallTarget): HandlerStages {
    if (typeof target === "string") return this.#rt.named(target);
    const t = _asHandlerOrStages(target, "Runtime.ffiCall");
    const bundle: HandlerStages = _isStages(t) ? t : { execute: t };
    if (bundle.execute == null) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        `Runtime.ffiCall: the bundle has no execute stage (got ${String(bundle.execute)}); ` +
          `XLA requires one`,
      );
    }
    // XLA checks the version when the target is registered, as Xla.ffiCall registers it.
    if (!this.#checked.has(bundle.execute)) {
      this.#rt.checkVersion(bundle.execute, `deno_xla.ffi_call.${_identity(t)}`);
      this.#checked.add(bundle.execute);
    }
    return bundle;
  }

  /** Runs a bundle's instantiate stage with the attributes only, as XLA does once per call site. */
  async #instantiate(
    target: FfiCallTarget,
    attrs: AttrDictionary | undefined,
  ): Promise<Instance> {
    const inst = _newInstance();
    try {
      using frame = buildFrame([], [], [], attrs, false);
      await this.#rt.call(target, frame, { stage: ExecutionStage.INSTANTIATE, instance: inst });
    } catch (e) {
      inst.close();
      throw e;
    }
    return inst;
  }

  /** `Runtime.clearCache`: closes the kept instances, none while a call uses one. */
  clear(): void {
    for (const inst of this.#instances.values()) {
      if (inst._inflight > 0) {
        throw new FfiError(
          ErrorCode.FAILED_PRECONDITION,
          "An ffiCall in flight uses a kept handler instance; await it before clearCache()",
        );
      }
    }
    const kept = [...this.#instances.values()];
    this.#instances.clear();
    for (const inst of kept) inst.close();
  }
}

/** The one place ffiCall builds its call frames. */
function buildFrame(
  args: readonly (ArrayInput | DeviceBuffer)[],
  rets: readonly (DataTypedArray | DeviceBuffer)[],
  specs: readonly { dtype: number; shape: readonly number[] }[],
  attrs: AttrDictionary | undefined,
  guard: boolean,
): CallFrame {
  const b = new CallFrameBuilder({ guard });
  for (const a of args) b.arg(a);
  for (let i = 0; i < rets.length; i++) b.ret(rets[i]!, specs[i]!.shape, specs[i]!.dtype);
  if (attrs !== undefined) b.attrs(attrs);
  return b.build();
}
