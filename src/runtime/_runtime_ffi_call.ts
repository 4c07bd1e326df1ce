/**
 * `Runtime.ffiCall`'s machinery: the stages of the target, the handler
 * instances kept per signature, the call frames it builds, its results (on
 * the host, or through device buffers on a CUDA runtime). Private to the
 * runtime.
 *
 * @module
 */
import { type DataType, ErrorCode, ExecutionStage } from "../abi/enums.ts";
import {
  byteWidth,
  type DataTypedArray,
  type DataTypedArrayConstructor,
  dataTypeInfo,
  dataTypeOf,
  viewAs,
} from "../abi/dtype.ts";
import { FfiError } from "../errors.ts";
import { _bufferBytes, _viewBytes } from "./_buffer_size.ts";
import { ArrayAttr, type AttrDictionary, ScalarAttr } from "./attributes.ts";
import { type CallFrame, CallFrameBuilder } from "./call_frame.ts";
import type { DeviceBuffer } from "./device_buffer.ts";
import {
  type _Arg,
  _checkAliases,
  _checkCallOptions,
  _identity,
  _normaliseArg,
  _normaliseSpec,
  _quickArg,
  _resultArray,
  _resultStorage,
  type ArrayArg,
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
import { _isTsEntry } from "./_begun_calls.ts";
import { _argsInLayout, _checkLayouts, type _Layouts, _resultsFromLayout } from "./_layout.ts";
import type { CallOptions, Runtime } from "./runtime.ts";

/** What ffiCall needs of its runtime, private parts included. */
export interface _FfiCallRuntime {
  /** Throws FAILED_PRECONDITION when the runtime is closed. */
  live(): void;
  /** The bundle registered under `name` (through the runtime's cache). */
  named(name: string): HandlerStages;
  /**
   * Calls one stage as `Runtime.call` does, with hints about implicit
   * attributes; `inline` runs a native handler on the calling thread;
   * `kept`: the frame is one this keeps, held by the call and bound to
   * arrays checked just before (the runtime's plan then uses it as it is,
   * without a snapshot). Returns undefined when the call ended before it
   * returned (or throws its error), else a Promise of its end.
   */
  call(
    target: FfiCallTarget,
    frame: CallFrame,
    options: CallOptions | undefined,
    inline: boolean,
    kept?: boolean,
  ): Promise<void> | undefined;
  /** Refuses a handler whose API version the runtime would not register, with its message. */
  checkVersion(handler: HandlerRef, name: string): void;
  /** The runtime's device copies when it runs on CUDA, null on Host. */
  readonly cuda: Pick<Runtime, "deviceArg" | "deviceBuffer" | "toHost"> | null;
}

/** ffiCall on one runtime, and the handler instances it keeps per signature. */
export class _FfiCalls {
  readonly #rt: _FfiCallRuntime;
  /** Handler instances per call site ({@link CallSite}), by the site's hash. */
  readonly #instances = new Map<number, CallSite[]>();
  /** Execute handlers whose API version was checked. */
  readonly #checked = new WeakSet<object>();
  /**
   * Call frames kept per signature (operand types and shapes, attributes),
   * their operands pointed at each call's arrays: laying a frame out is
   * most of what a call would cost otherwise. At most {@link MAX_FRAMES}.
   */
  readonly #frames = new Map<number, KeptFrame>();
  /** The kept frame of the latest call that used one (null: none, or it was closed). */
  #last: KeptFrame | null = null;
  /** The bundle of each handler (not a bundle or a name) called, held no longer than the handler. */
  readonly #bundleOf = new WeakMap<object, HandlerStages>();
  /** The handler {@link #bundle} was last asked for (not a name or bundle), and its bundle. */
  #lastHandler: object | null = null;
  #lastBundle: HandlerStages | null = null;

  constructor(rt: _FfiCallRuntime) {
    this.#rt = rt;
  }

  /** `Runtime.ffiCall`. */
  call(target: FfiCallTarget, options: FfiCallOptions): Promise<DataTypedArray[]> {
    // Not an async function: the previous call's signature again (a loop's case) is a call that
    // is usually over before it returns, without the cost of an async function's state.
    try {
      const again = this.#again(target, options);
      if (again !== null) return again;
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#call(target, options);
  }

  /**
   * Checks the call's options, then makes it if it has the previous call's
   * signature (its kept frame is checked against this call's operands
   * without normalising them; a plain handler or a registered name, no
   * layouts, aliases or guard); null when the general path must.
   */
  #again(target: FfiCallTarget, options: FfiCallOptions): Promise<DataTypedArray[]> | null {
    const rt = this.#rt;
    rt.live();
    _checkCallOptions(options);
    const last = this.#last;
    if (
      last === null || rt.cuda !== null || options.guard === true ||
      options.inputOutputAliases !== undefined || options.inputLayouts !== undefined ||
      options.outputLayouts !== undefined ||
      // A call whose results hold no element runs only with a side effect: the general path
      // decides.
      (options.hasSideEffect !== true && _noElements(options.results))
    ) {
      return null;
    }
    const views = last.sameCall(options);
    if (views === null) return null;
    const bundle = this.#bundle(target);
    if (bundle.instantiate || bundle.prepare != null || bundle.initialize != null) return null;
    const outs = last.results();
    const frame = last.frame;
    let pending: Promise<void> | undefined;
    try {
      last.bind(views, outs, true, _isTsEntry(bundle.execute.pointer));
      pending = rt.call(target, frame, undefined, options.offThread !== true, true);
    } catch (e) {
      last.release();
      throw e;
    }
    if (pending === undefined) {
      last.finish(outs);
      return Promise.resolve(outs);
    }
    return pending.then(
      () => {
        last.finish(outs);
        return outs;
      },
      (e) => {
        last.release();
        throw e;
      },
    );
  }

  /** ffiCall's general path (the options were checked): normalises, lays out or finds a frame. */
  async #call(target: FfiCallTarget, options: FfiCallOptions): Promise<DataTypedArray[]> {
    const rt = this.#rt;
    const given = options.args ?? [];
    let args: _Arg[] = new Array(given.length);
    for (let i = 0; i < given.length; i++) {
      const a = given[i]!;
      // The message of a mistake is made only when there is one.
      const quick = a !== null && typeof a === "object" && !ArrayBuffer.isView(a)
        ? _quickArg(a)
        : null;
      args[i] = quick ?? _normaliseArg(a, `argument ${i}`);
    }
    const specs = options.results.map((r, i) => _normaliseSpec(r, `result ${i}`));
    const aliases = _checkAliases(options.inputOutputAliases, args, specs);
    const layouts = _checkLayouts(
      options.inputLayouts,
      options.outputLayouts,
      args,
      specs,
      aliases,
    );
    if (options.hasSideEffect !== true && _noElements(specs)) {
      return this.#dropped(target, options.attrs, specs);
    }
    const bundle = this.#bundle(target);
    let instance: Instance | undefined;
    if (bundle.instantiate) {
      const site = new CallSite(target, args, specs, options.attrs, aliases, layouts);
      instance = this.#instanceOf(site);
      if (instance === undefined) {
        instance = await this.#instantiate(target, options.attrs, options.offThread !== true);
        // Another call of this site may have instantiated meanwhile: the first one made is kept.
        const made = this.#instanceOf(site);
        if (made !== undefined) {
          instance.close();
          instance = made;
        } else {
          site.instance = instance;
          const list = this.#instances.get(site.hash);
          if (list === undefined) this.#instances.set(site.hash, [site]);
          else list.push(site);
        }
      }
    }
    // XLA's CPU runtime runs a synchronous handler inline: xla/ffi/ffi_api.cc `Call` invokes the
    // handler on the calling thread and waits there for a future it returns (BlockUntilReady);
    // the embedded runtime awaits such a future without blocking. `offThread` asks for the pool.
    const inline = options.offThread !== true;
    const staged = bundle.prepare != null || bundle.initialize != null;
    const run = async (frame: CallFrame) => {
      for (const stage of [ExecutionStage.PREPARE, ExecutionStage.INITIALIZE] as const) {
        if (_stageHandler(bundle, stage) === null) continue;
        await rt.call(target, frame, { stage, instance }, inline);
      }
      await rt.call(target, frame, instance ? { instance } : undefined, inline);
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
    if (options.guard === true) {
      using frame = buildFrame(inputs, outs, specs, options.attrs, true);
      await run(frame);
    } else {
      const kept = this.#keptFrame(inputs, specs, options.attrs);
      const frame = kept?.frame ?? buildFrame(inputs, outs, specs, options.attrs, false);
      let done = false;
      try {
        if (kept !== null) {
          // An aliased result is its argument's copy: the handler must get that one.
          const ts = _isTsEntry(bundle.execute.pointer);
          kept.bind(inputs.map((a) => a.data), outs, aliases.length === 0, ts);
        }
        if (staged || instance !== undefined) await run(frame);
        else {
          // The common case without a closure: one stage, often over before it returns.
          const pending = rt.call(target, frame, undefined, inline, kept !== null);
          if (pending !== undefined) await pending;
        }
        done = true;
      } finally {
        if (kept === null) frame.close();
        else if (done) kept.finish(outs);
        else kept.release();
      }
    }
    return layouts === null ? outs : _resultsFromLayout(outs, specs, layouts);
  }

  /**
   * The frame kept for this signature, laid out on first use with its
   * operands at null; null when the kept one is in use by a call in flight
   * (the caller builds one of its own then).
   */
  #keptFrame(
    inputs: readonly ArrayInput[],
    specs: readonly { dtype: number; shape: readonly number[] }[],
    attrs: AttrDictionary | undefined,
  ): KeptFrame | null {
    let h = inputs.length * 131 + specs.length;
    for (let i = 0; i < inputs.length; i++) h = hashSpec(h, inputs[i]!.dtype!, inputs[i]!.shape!);
    for (let i = 0; i < specs.length; i++) h = hashSpec(h, specs[i]!.dtype, specs[i]!.shape);
    const kept = this.#frames.get(h);
    if (kept !== undefined && !kept.busy && kept.matches(inputs, specs, attrs)) {
      this.#last = kept;
      return kept;
    }
    if (kept !== undefined && kept.busy) return null;
    const b = new CallFrameBuilder();
    for (const a of inputs) b.argPointer(null, a.dtype!, a.shape!);
    for (const r of specs) b.retPointer(null, r.dtype, r.shape);
    if (attrs !== undefined) b.attrs(attrs);
    const frame = b.build();
    if (kept !== undefined) {
      this.#frames.delete(h);
      kept.frame.close();
    } else if (this.#frames.size >= MAX_FRAMES) {
      for (const [k, f] of this.#frames) {
        if (f.busy) continue;
        this.#frames.delete(k);
        f.frame.close();
        break;
      }
    }
    const made = new KeptFrame(frame, inputs, specs, attrs);
    this.#frames.set(h, made);
    this.#last = made;
    return made;
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
    // A handler's bundle is made of it alone (a bundle given may change, a name be registered
    // again): a loop calling one handler gets the same one, the last one without a lookup.
    if (target === this.#lastHandler) return this.#lastBundle!;
    const known = this.#bundleOf.get(target);
    if (known !== undefined) {
      this.#lastHandler = target;
      this.#lastBundle = known;
      return known;
    }
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
    if (!_isStages(t)) this.#bundleOf.set(target, bundle);
    return bundle;
  }

  /**
   * A call with no side effect whose results hold no element, as jax and
   * XLA make it. With no results at all, `ffi_call` gives the call no
   * effects and no outputs, so `jax.jit` removes it as dead code before
   * lowering (jax/_src/ffi.py's abstract evaluation, and the dead-code
   * elimination `pxla` runs on the jaxpr). With results that all have a
   * zero dimension, XLA's ZeroSizedHloElimination
   * (xla/hlo/transforms/simplifiers/zero_sized_hlo_elimination.cc: any
   * instruction without side effects whose array shape has no element)
   * replaces each with an
   * empty constant and its dead-code pass removes the custom call. Either
   * way the handler is not called, a name is not looked up, the attributes
   * are not decoded, and the call resolves to its results, empty. What jax
   * checks before that is checked here too: the operands and options
   * (checked by the caller), a handler or bundle given (`Xla.ffiCall`
   * registers it), the attribute values (encoded for the program).
   */
  #dropped(
    target: FfiCallTarget,
    attrs: AttrDictionary | undefined,
    specs: readonly { dtype: number }[],
  ): DataTypedArray[] {
    if (typeof target !== "string") this.#bundle(target);
    if (attrs !== undefined) buildFrame([], [], [], attrs, false).close();
    return specs.map((s, i) => viewAs(s.dtype as DataType, _resultStorage(0, `result ${i}`)));
  }

  /** Runs a bundle's instantiate stage with the attributes only, as XLA does once per call site. */
  async #instantiate(
    target: FfiCallTarget,
    attrs: AttrDictionary | undefined,
    inline: boolean,
  ): Promise<Instance> {
    const inst = _newInstance();
    try {
      using frame = buildFrame([], [], [], attrs, false);
      await this.#rt.call(
        target,
        frame,
        { stage: ExecutionStage.INSTANTIATE, instance: inst },
        inline,
      );
    } catch (e) {
      inst.close();
      throw e;
    }
    return inst;
  }

  /** The instance kept for a call site equal to `site`, if any. */
  #instanceOf(site: CallSite): Instance | undefined {
    const list = this.#instances.get(site.hash);
    if (list === undefined) return undefined;
    for (const s of list) if (s.equals(site)) return s.instance;
    return undefined;
  }

  /** `Runtime.clearCache`: closes the kept instances, none while a call uses one. */
  clear(): void {
    const sites = [...this.#instances.values()].flat();
    for (const { instance: inst } of sites) {
      if (inst !== undefined && inst._inflight > 0) {
        throw new FfiError(
          ErrorCode.FAILED_PRECONDITION,
          "An ffiCall in flight uses a kept handler instance; await it before clearCache()",
        );
      }
    }
    this.#instances.clear();
    for (const { instance } of sites) instance?.close();
    for (const [k, f] of this.#frames) {
      if (f.busy) continue;
      this.#frames.delete(k);
      f.frame.close();
    }
    this.#last = null;
  }
}

/** The most call frames one runtime's ffiCall keeps. */
const MAX_FRAMES = 64;

/** Mixes an operand's data type and shape into a signature's hash. */
function hashSpec(h: number, dtype: number, shape: readonly number[]): number {
  h = Math.imul(h ^ dtype, 0x9e3779b1) + shape.length;
  for (let i = 0; i < shape.length; i++) h = Math.imul(h ^ (shape[i]! % 0x7fffffff), 0x85ebca6b);
  return h | 0;
}

/**
 * A call site, as XLA has one handler instance per call site: the target,
 * the operands' data types and shapes, the result specs, a copy of the
 * attributes, aliases and layouts. Compared by value ({@link equals}: the
 * attributes as {@link _sameAttr} compares them, so `5n` and `"5n"`, or a
 * `ScalarAttr` and a dictionary of its fields, are different sites), never
 * by a text made of them.
 */
class CallSite {
  readonly hash: number;
  readonly #target: FfiCallTarget;
  readonly #dtypes: number[];
  readonly #shapes: (readonly number[])[];
  readonly #attrs: unknown;
  readonly #aliases: readonly (readonly [number, number])[];
  readonly #layouts: _Layouts | null;
  /** The instance made for the site. */
  instance: Instance | undefined;

  constructor(
    target: FfiCallTarget,
    args: readonly { dtype: number; shape: readonly number[] }[],
    specs: readonly { dtype: number; shape: readonly number[] }[],
    attrs: AttrDictionary | undefined,
    aliases: readonly (readonly [number, number])[],
    layouts: _Layouts | null,
  ) {
    this.#target = target;
    const ops = [...args, ...specs];
    this.#dtypes = ops.map((o) => o.dtype);
    this.#shapes = ops.map((o) => [...o.shape]);
    this.#attrs = _copyAttr(attrs);
    this.#aliases = aliases.map(([a, r]) => [a, r] as const);
    this.#layouts = layouts;
    let h = args.length * 131 + specs.length;
    for (let i = 0; i < ops.length; i++) h = hashSpec(h, ops[i]!.dtype, ops[i]!.shape);
    this.hash = h;
  }

  /** Whether `o` is the same call site. */
  equals(o: CallSite): boolean {
    if (this.#target !== o.#target || this.#dtypes.length !== o.#dtypes.length) return false;
    for (let i = 0; i < this.#dtypes.length; i++) {
      if (this.#dtypes[i] !== o.#dtypes[i] || !sameList(this.#shapes[i]!, o.#shapes[i]!)) {
        return false;
      }
    }
    return sameNested(this.#aliases, o.#aliases) && sameNested(this.#layouts, o.#layouts) &&
      _sameCopies(this.#attrs, o.#attrs);
  }
}

/** Whether two values made of arrays, plain objects, numbers and null are equal. */
function sameNested(a: unknown, b: unknown): boolean {
  if (a === null || typeof a !== "object" || b === null || typeof b !== "object") {
    return Object.is(a, b);
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a), kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    if (ka[i] !== kb[i]) return false;
    const k = ka[i]!;
    if (!sameNested((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) {
      return false;
    }
  }
  return true;
}

/** Whether two copies made by {@link _copyAttr} are equal, as {@link _sameAttr} compares. */
function _sameCopies(a: unknown, b: unknown): boolean {
  if (a instanceof DictCopy) {
    if (!(b instanceof DictCopy) || a.keys.length !== b.keys.length) return false;
    for (let i = 0; i < a.keys.length; i++) {
      if (a.keys[i] !== b.keys[i] || !_sameCopies(a.values[i], b.values[i])) return false;
    }
    return true;
  }
  if (b instanceof DictCopy) return false;
  if (a instanceof Map && b instanceof Map) {
    if (a.size !== b.size) return false;
    const bi = b.entries();
    for (const [k, x] of a) {
      const [bk, bx] = bi.next().value!;
      if (k !== bk || !_sameCopies(x, bx)) return false;
    }
    return true;
  }
  return _sameAttr(a, b);
}

/** A kept frame and what it was laid out for: operand types and shapes, a copy of the attributes. */
class KeptFrame {
  readonly frame: CallFrame;
  readonly #dtypes: number[];
  readonly #shapes: number[][];
  /** Bytes of each operand (arguments, then results). */
  readonly #bytes: number[];
  /** The typed array of each result's data type. */
  readonly #resultArrays: DataTypedArrayConstructor[];
  readonly #attrs: unknown;
  /**
   * A call holds the frame: from when it is bound to the call's arrays until
   * the call has ended and the frame is released (the frame's in-flight
   * count ends earlier, before the call's caller resumes).
   */
  busy = false;
  /** Per result, the frame's own storage for it ({@link bind}); null: a larger result. */
  #store: (DataTypedArray | null)[] | null = null;
  /** What the frame's results are bound to, reused by every call (one call at a time). */
  #rets: DataTypedArray[] | null = null;
  /** What the call holding the frame has its results bound to. */
  #bound: readonly DataTypedArray[] | null = null;

  constructor(
    frame: CallFrame,
    inputs: readonly ArrayInput[],
    specs: readonly { dtype: number; shape: readonly number[] }[],
    attrs: AttrDictionary | undefined,
  ) {
    this.frame = frame;
    this.#dtypes = [...inputs.map((a) => a.dtype!), ...specs.map((r) => r.dtype)];
    this.#shapes = [...inputs.map((a) => [...a.shape!]), ...specs.map((r) => [...r.shape])];
    this.#bytes = this.#shapes.map((s, i) => _bufferBytes(this.#dtypes[i]!, s, ""));
    this.#resultArrays = specs.map((r) => dataTypeInfo(r.dtype).typedArray!);
    this.#attrs = _copyAttr(attrs);
  }

  /**
   * The argument arrays of a call whose operands and attributes are this
   * frame's signature, each passing every check the general path makes
   * (`_quickArg`, `_normaliseArg`, `_normaliseSpec`: a view that is not
   * detached, the data type given or its own, the shape given or its
   * length, exactly the bytes of that shape; each result spec an object of
   * a dtype and a shape array); null when anything differs or the frame is
   * closed or in use (the general path then checks, says what is wrong or
   * finds or lays out a frame). Reads each argument's fields once: the arrays it returns are
   * the ones it checked.
   */
  sameCall(options: FfiCallOptions): ArrayBufferView[] | null {
    const frame = this.frame;
    if (frame._ptr === null || this.busy) return null;
    const given = options.args ?? NO_ARGS;
    const n = given.length, specs = options.results, dtypes = this.#dtypes;
    if (n !== frame.numArgs || specs.length !== frame.numRets) return null;
    const views: ArrayBufferView[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const a = given[i];
      let data: unknown, dtype: unknown, shape: unknown;
      if (ArrayBuffer.isView(a)) data = a;
      else if (a !== null && typeof a === "object") ({ data, dtype, shape } = a as ArrayInput);
      else return null;
      if (!ArrayBuffer.isView(data) || (dtype ?? ownDataType(data)) !== dtypes[i]) return null;
      // A view of a detached buffer has no bytes (a DataView's byteLength throws: 0 here).
      const bytes = this.#bytes[i]!;
      if (
        _viewBytes(data) !== bytes ||
        (bytes === 0 && (data.buffer as ArrayBuffer).detached === true)
      ) return null;
      const want = this.#shapes[i]!;
      if (
        shape === undefined ? want.length !== 1 : !Array.isArray(shape) || !sameDims(shape, want)
      ) {
        return null;
      }
      views[i] = data;
    }
    for (let i = 0; i < specs.length; i++) {
      const r = specs[i];
      if (r === null || typeof r !== "object" || Array.isArray(r)) return null;
      const { dtype, shape } = r;
      if (
        dtype !== dtypes[n + i] || !Array.isArray(shape) || !sameDims(shape, this.#shapes[n + i]!)
      ) {
        return null;
      }
    }
    return _sameAttr(options.attrs, this.#attrs) ? views : null;
  }

  /** Fresh zeroed results of this frame's result specs. */
  results(): DataTypedArray[] {
    const n = this.frame.numArgs, m = this.frame.numRets, of = this.#resultArrays;
    const outs: DataTypedArray[] = new Array(m);
    for (let i = 0; i < m; i++) outs[i] = _resultArray(of[i]!, this.#bytes[n + i]!, `result ${i}`);
    return outs;
  }

  /**
   * Binds the frame to a call's arrays and holds it for the call: the
   * arguments, and for each result of up to {@link STORE_BYTES} (when
   * `store`: no result is aliased) the frame's own storage for it, zeroed as
   * a fresh result is, else the returned array itself. The storage is the
   * call's buffer, as XLA hands a handler buffers it allocated: the handler
   * writes it, and {@link finish} copies what it wrote into the returned
   * arrays once the call is over. Its address is the same for every call,
   * so the frame is not rewritten for it and a TS handler's decoder reuses
   * its buffers and views (a view of a new address, or the address of a new
   * ArrayBuffer, costs more than zeroing and copying a few KiB).
   */
  bind(
    args: readonly ArrayBufferView[],
    outs: DataTypedArray[],
    store: boolean,
    ts: boolean,
  ): void {
    this.busy = true;
    let rets: readonly DataTypedArray[] = outs;
    if (store) {
      const n = this.frame.numArgs;
      const kept = this.#store ??= this.#resultArrays.map((of, i) => {
        const bytes = this.#bytes[n + i]!;
        return bytes <= STORE_BYTES ? new of(new ArrayBuffer(bytes)) : null;
      });
      const list = this.#rets ??= new Array(outs.length);
      for (let i = 0; i < outs.length; i++) {
        const k = kept[i]!;
        if (k === null) list[i] = outs[i]!;
        else {
          list[i] = k;
          const b = new Uint8Array(k.buffer, 0, k.byteLength);
          if (b.length > 64) b.fill(0);
          else for (let j = 0; j < b.length; j++) b[j] = 0; // fill is a call into the runtime
        }
      }
      rets = list;
    }
    this.#bound = rets;
    this.frame._rebind(args, rets, ts);
  }

  /** The call is over and succeeded: what it wrote into the frame's storage, into `outs`. */
  finish(outs: DataTypedArray[]): void {
    const rets = this.#bound;
    if (rets !== null) {
      for (let i = 0; i < outs.length; i++) {
        const r = rets[i]!, o = outs[i]!;
        if (r !== o) (o as Float64Array).set(r as Float64Array);
      }
    }
    this.release();
  }

  /** The call that held the frame is over: its arrays are let go of. */
  release(): void {
    this.frame._release();
    this.#bound = null;
    this.busy = false;
  }

  /** Whether a call of these operands and attributes would lay out the same frame. */
  matches(
    inputs: readonly ArrayInput[],
    specs: readonly { dtype: number; shape: readonly number[] }[],
    attrs: AttrDictionary | undefined,
  ): boolean {
    const n = inputs.length;
    if (n + specs.length !== this.#dtypes.length) return false;
    for (let i = 0; i < this.#dtypes.length; i++) {
      const o = i < n ? inputs[i]! : specs[i - n]!;
      if (o.dtype !== this.#dtypes[i] || !sameList(o.shape!, this.#shapes[i]!)) return false;
    }
    return _sameAttr(attrs, this.#attrs);
  }
}

const NO_ARGS: readonly ArrayArg[] = [];

/**
 * The largest result a kept frame has storage of its own for
 * ({@link KeptFrame.bind}): zeroing 4 KiB and copying it out take about
 * 0.1 µs, the address of a new ArrayBuffer about 1–2 µs whatever its size.
 */
const STORE_BYTES = 4096;

/** The data type a typed array holds (dataTypeOf's answer), or -1 (a DataView, say). */
function ownDataType(data: ArrayBufferView): number {
  try {
    return dataTypeOf(data);
  } catch {
    return -1;
  }
}

/** Whether dims `a` (any values) are the valid dims `b`: `===`, as `-0` and `0` lay out alike. */
function sameDims(a: readonly unknown[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < b.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Whether two lists hold the same values (`Object.is`); two typed arrays
 * holding NaNs are compared by their bytes too, as a frame carries a NaN's
 * payload and sign.
 */
function sameList(a: ArrayLike<unknown>, b: ArrayLike<unknown>): boolean {
  if (a.length !== b.length) return false;
  let nan = false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    if (!Object.is(x, b[i])) return false;
    if (x !== x) nan = true;
  }
  return !nan || !ArrayBuffer.isView(a) || !ArrayBuffer.isView(b) || sameBytes(a, b);
}

function sameBytes(a: ArrayBufferView, b: ArrayBufferView): boolean {
  if (a.byteLength !== b.byteLength) return false;
  const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/** A copy of a plain attribute dictionary: its own names in order, and copies of their values. */
class DictCopy {
  /** Per value, what {@link _sameAttr} compares: 0 a primitive, 1 a ScalarAttr, 2 an ArrayAttr, 3 other. */
  readonly kinds: readonly number[];
  constructor(readonly keys: readonly string[], readonly values: readonly unknown[]) {
    this.kinds = values.map((v) =>
      v === null || typeof v !== "object"
        ? 0
        : v instanceof ScalarAttr
        ? 1
        : v instanceof ArrayAttr
        ? 2
        : 3
    );
  }
}

/**
 * A copy of an attribute value that later changes to the caller's object
 * cannot reach: dictionaries, lists and typed arrays copied, the rest kept.
 */
export function _copyAttr(v: unknown): unknown {
  if (v === null || typeof v !== "object") return v;
  if (v instanceof ScalarAttr) return new ScalarAttr(v.dtype, v.value);
  if (v instanceof ArrayAttr) {
    const values = v.values;
    // A typed array is copied as it is: its bytes (a NaN's payload) are what the frame carries.
    return new ArrayAttr(
      v.dtype,
      ArrayBuffer.isView(values)
        ? (values as unknown as { slice(): ArrayLike<number | bigint> }).slice()
        : Array.from(values),
    );
  }
  if (ArrayBuffer.isView(v)) return (v as unknown as { slice(): unknown }).slice();
  if (Array.isArray(v)) return v.slice();
  if (v instanceof Map) return new Map([...v].map(([k, x]) => [k, _copyAttr(x)]));
  const keys = Object.keys(v);
  return new DictCopy(keys, keys.map((k) => _copyAttr((v as Record<string, unknown>)[k])));
}

/**
 * Whether attribute value `a` equals the copy `b` ({@link _copyAttr}) as a
 * frame encodes them: the same names in the same order, the same kinds,
 * data types and values (`-0` apart from `0`, as their bits are).
 */
export function _sameAttr(a: unknown, b: unknown): boolean {
  if (a === null || typeof a !== "object" || b === null || typeof b !== "object") {
    return Object.is(a, b);
  }
  if (a instanceof ScalarAttr) {
    return b instanceof ScalarAttr && a.dtype === b.dtype && Object.is(a.value, b.value);
  }
  if (a instanceof ArrayAttr) {
    return b instanceof ArrayAttr && a.dtype === b.dtype && sameList(a.values, b.values);
  }
  if (ArrayBuffer.isView(a)) {
    return ArrayBuffer.isView(b) && a.constructor === b.constructor &&
      sameList(a as unknown as ArrayLike<unknown>, b as unknown as ArrayLike<unknown>);
  }
  if (Array.isArray(a)) return Array.isArray(b) && sameList(a, b);
  if (a instanceof Map) {
    if (!(b instanceof Map) || a.size !== b.size) return false;
    const bi = b.entries();
    for (const [k, x] of a) {
      const [bk, bx] = bi.next().value!;
      if (k !== bk || !_sameAttr(x, bx)) return false;
    }
    return true;
  }
  if (!(b instanceof DictCopy)) return false;
  // A frame sorts attributes by name; the same names in another order are only a cache miss.
  // for-in reads each value through the object's enumeration cache (a keyed read after
  // Object.keys is a generic lookup, twice the cost); it visits the own names in Object.keys'
  // order, then inherited ones: the last name being an own one means every name was.
  const bk = b.keys, bv = b.values, kinds = b.kinds, n = bk.length;
  let i = 0;
  for (const k in a) {
    if (i === n || k !== bk[i]) return false;
    const x = (a as Record<string, unknown>)[k], y = bv[i];
    // The branches _sameAttr(x, y) takes for a y of each kind, without its tests of x's kind.
    switch (kinds[i]) {
      case 0:
        if (!Object.is(x, y)) return false;
        break;
      case 1:
        if (
          !(x instanceof ScalarAttr) || x.dtype !== (y as ScalarAttr).dtype ||
          !Object.is(x.value, (y as ScalarAttr).value)
        ) return false;
        break;
      case 2:
        if (
          x instanceof ScalarAttr || !(x instanceof ArrayAttr) ||
          x.dtype !== (y as ArrayAttr).dtype || !sameList(x.values, (y as ArrayAttr).values)
        ) return false;
        break;
      default:
        if (!_sameAttr(x, y)) return false;
    }
    i++;
  }
  return i === n && (n === 0 || Object.hasOwn(a, bk[n - 1]!));
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

/**
 * Whether no result holds an element (none at all, or each with a zero
 * dimension). Specs not yet checked may be anything: one that is not an
 * object with a shape array counts as holding elements (the general path
 * then refuses it).
 */
function _noElements(specs: readonly unknown[]): boolean {
  for (let i = 0; i < specs.length; i++) {
    const spec = specs[i] as { shape?: unknown } | null;
    const shape = spec !== null && typeof spec === "object" ? spec.shape : undefined;
    if (!Array.isArray(shape) || !shape.includes(0)) return false;
  }
  return true;
}
