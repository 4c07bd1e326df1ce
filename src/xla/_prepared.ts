/**
 * Prepared calls: the path of `XlaProgram.run`, `runSync` and `Xla.ffiCall`.
 * A program (or an `ffi_call` signature) with one argument signature is
 * planned once in Python (`op_plan` in `python/bridge.py`); a call then
 * sends a binary request of 64-bit words, no JSON and no array data:
 *
 *   [0xFFFFFFFF | nargs << 32, host, plan, nouts,
 *    (address, bytes) per argument, (address, bytes) per result]
 *
 * Python calls the jitted function on NumPy arrays over the argument memory
 * and copies each result once into the memory at its address (reply status
 * 4, no header). A call holds a frame of its plan (reused: its request, its
 * reply buffer and the memory of small operands, with addresses taken
 * once), so calls of one plan in flight at once never share memory.
 * Arguments of up to {@link STAGED} bytes are copied into the frame (the
 * address of the caller's array would cost more than the copy); larger ones
 * are read where they are during `runSync`, and copied into the frame for an
 * async call (the caller may change or transfer its array meanwhile).
 * Results of up to {@link STAGED} bytes are written into the frame and
 * copied into the returned arrays; larger ones are written straight into
 * the returned array. Until a plan has seen its results' types (its first
 * call) they come back as a results reply, as every request's do.
 *
 * @module
 */
import { type DataType, ErrorCode } from "../abi/enums.ts";
import { byteWidth, dataTypeInfo, viewAs } from "../abi/dtype.ts";
import { _checkDataSize, _isDetached, _isResizable } from "../runtime/_buffer_size.ts";
import { FfiError } from "../errors.ts";
import {
  type _Arg,
  type _AttrJson,
  _normaliseArg,
  _normaliseSpec,
  type _Reply,
  _replyArrays,
  type XlaArg,
  type XlaArray,
} from "./_codec.ts";
import { _callPrepared, _callPreparedSync, _dispatchPrepared } from "./_host.ts";
import type { _ResultsReply } from "./_protocol.ts";
import type { ArraySpec } from "../runtime/ffi_call.ts";

/** Operands of up to this many bytes live in the frame. */
const STAGED = 4096;

const align64 = (n: number) => (n + 63) & ~63;

interface Out {
  dtype: DataType;
  dtypeName: string;
  shape: number[];
  bytes: number;
}

/** The memory of one call of a plan. */
interface Frame {
  /** The request's words, then the staged operands. */
  mem: Uint8Array;
  words: Uint32Array;
  /** The request's length and the reply's capacity (made once: a BigInt per call costs). */
  len: bigint;
  cap: bigint;
  reply: Uint8Array;
  status: Int32Array;
  base: number;
  /** Whether calls of the frame run on the JS thread (and may read arguments in place). */
  sync: boolean;
  /** Offset of each argument's staged copy. */
  argAt: number[];
  /** Offset of each result's slot in the frame, or -1 for one written into its returned array. */
  outAt: number[];
  /** The results this frame was laid out for. */
  outs: Out[] | null;
  /** Flags the frame's request as the FINISH of a dispatched call (made once). */
  finish: () => void;
  /**
   * Whether the request's words stay as they are between calls (every
   * operand in the frame): once a call has succeeded, later ones are flagged
   * STABLE and the bridge takes what that call found (`bridge.py`, Ctx).
   */
  fixed: boolean;
  /** Whether a call of the frame has succeeded. */
  called: boolean;
}

/** One program (or `ffi_call`) with one argument signature, planned in Python. */
export class _Plan {
  readonly id: number;
  readonly host: number;
  readonly argBytes: number[];
  /** The argument signature the plan was made for: element types and shapes. */
  readonly #dtypes: DataType[];
  readonly #shapes: number[][];
  /** {@link _signatureHash} of the signature. */
  readonly hash: number;
  outs: Out[] | null = null;
  /** Whether `call` dispatches on the JS thread first (until the bridge says the program calls a TS target). */
  #dispatch = true;
  readonly #free: { sync: Frame[]; async: Frame[] } = { sync: [], async: [] };

  constructor(host: number, id: number, args: readonly _Arg[]) {
    this.host = host;
    this.id = id;
    this.argBytes = args.map((a) => a.bytes.byteLength);
    this.#dtypes = args.map((a) => a.dtype);
    this.#shapes = args.map((a) => [...a.shape]);
    this.hash = _signatureHash(args);
  }

  /** Whether these arguments have the plan's signature (element types and shapes, by value). */
  matches(args: readonly _Arg[]): boolean {
    const dtypes = this.#dtypes;
    if (args.length !== dtypes.length) return false;
    for (let i = 0; i < args.length; i++) {
      const a = args[i]!;
      if (a.dtype !== dtypes[i]) return false;
      const s = this.#shapes[i]!, t = a.shape;
      if (s.length !== t.length) return false;
      for (let j = 0; j < s.length; j++) if (s[j] !== t[j]) return false;
    }
    return true;
  }

  #frame(sync: boolean): Frame {
    const pool = sync ? this.#free.sync : this.#free.async;
    const f = pool.pop();
    if (f !== undefined && f.outs === this.outs) return f;
    const outs = this.outs;
    const nargs = this.argBytes.length, nouts = outs?.length ?? 0;
    const head = align64(8 * (4 + 2 * (nargs + nouts)));
    let off = head;
    const argAt = this.argBytes.map((n) => {
      const at = off;
      off = align64(off + n);
      return at;
    });
    const outAt = (outs ?? []).map((o) => {
      if (o.bytes > STAGED) return -1;
      const at = off;
      off = align64(off + o.bytes);
      return at;
    });
    // Operands at 64-byte aligned addresses: XLA reads an aligned argument in place.
    const raw = new Uint8Array(off + 64);
    const rawAt = Number(Deno.UnsafePointer.value(Deno.UnsafePointer.of(raw)));
    const skip = (64 - (rawAt % 64)) % 64;
    const mem = raw.subarray(skip, skip + off);
    const base = rawAt + skip;
    const words = new Uint32Array(mem.buffer, mem.byteOffset, head / 4);
    const reply = new Uint8Array(65536);
    const frame: Frame = {
      mem,
      words,
      len: BigInt(head),
      cap: BigInt(reply.length),
      reply,
      status: new Int32Array(reply.buffer, 0, 1),
      base,
      sync,
      argAt,
      outAt,
      outs,
      finish: () => {
        words[FLAGS] = (words[FLAGS]! & STABLE) | FINISH;
      },
      fixed: outAt.every((at) => at >= 0) &&
        (!sync || this.argBytes.every((n) => n <= STAGED)),
      called: false,
    };
    words[0] = 0xFFFFFFFF;
    words[1] = nargs;
    setWord(words, 1, this.host);
    setWord(words, 2, this.id);
    setWord(words, 3, nouts);
    for (let i = 0; i < nargs; i++) {
      setWord(words, 4 + 2 * i, base + argAt[i]!);
      setWord(words, 5 + 2 * i, this.argBytes[i]!);
    }
    for (let i = 0; i < nouts; i++) {
      const w = 4 + 2 * (nargs + i);
      if (outAt[i]! >= 0) setWord(words, w, base + outAt[i]!);
      setWord(words, w + 1, outs![i]!.bytes);
    }
    return frame;
  }

  #release(frame: Frame, sync: boolean): void {
    if (frame.outs === this.outs) (sync ? this.#free.sync : this.#free.async).push(frame);
  }

  /**
   * Fills a frame's request for these arguments; the result arrays written in
   * place (the caller's `into`, where given).
   */
  #fill(frame: Frame, args: readonly _Arg[], into?: readonly Uint8Array[]): Uint8Array[] {
    const { mem, words, argAt, outAt, base, sync } = frame;
    words[FLAGS] = frame.fixed && frame.called ? STABLE : 0;
    for (let i = 0; i < args.length; i++) {
      const bytes = args[i]!.bytes;
      if (sync && bytes.byteLength > STAGED) {
        // Read in place when XLA can (aligned); else copied to the frame's aligned slot.
        const at = address(bytes);
        if (at % 64 === 0) {
          setWord(words, 4 + 2 * i, at);
          continue;
        }
        setWord(words, 4 + 2 * i, base + argAt[i]!);
      }
      mem.set(bytes, argAt[i]!);
    }
    const big: Uint8Array[] = [];
    const outs = frame.outs ?? [];
    for (let i = 0; i < outs.length; i++) {
      if (outAt[i]! >= 0) continue;
      const a = into?.[i] ?? new Uint8Array(outs[i]!.bytes);
      big.push(a);
      if (a.byteLength > 0) setWord(words, 4 + 2 * (args.length + i), address(a));
    }
    return big;
  }

  /**
   * The results of a call: copied out of the frame (into the caller's
   * `into`, where given), or the arrays written in place.
   */
  #results(frame: Frame, big: Uint8Array[], into?: readonly Uint8Array[]): XlaArray[] {
    frame.called = true;
    const outs = frame.outs!;
    const out: XlaArray[] = new Array(outs.length);
    let b = 0;
    for (let i = 0; i < outs.length; i++) {
      const o = outs[i]!, at = frame.outAt[i]!;
      let bytes: Uint8Array;
      if (at < 0) bytes = big[b++]!;
      else if (into === undefined) bytes = frame.mem.slice(at, at + o.bytes);
      else (bytes = into[i]!).set(frame.mem.subarray(at, at + o.bytes));
      out[i] = {
        dtype: o.dtype,
        dtypeName: o.dtypeName,
        shape: [...o.shape],
        data: viewAs(o.dtype, bytes),
      };
    }
    return out;
  }

  /** Learns the results' types from a results reply. */
  #learn(r: _Reply<_ResultsReply>): XlaArray[] {
    const out = _replyArrays(r);
    this.outs = out.map((a) => ({
      dtype: a.dtype,
      dtypeName: a.dtypeName,
      shape: [...a.shape],
      bytes: a.shape.reduce((x, y) => x * y, 1) * byteWidth(a.dtype),
    }));
    return out;
  }

  /**
   * Calls the plan with Python on the JS thread; with `out`, its results are
   * written into those arrays ({@link _outBytes}) and returned over them.
   */
  callSync(args: readonly _Arg[], out?: readonly ArrayBufferView[]): XlaArray[] {
    let into = out === undefined ? undefined : _outBytes(out, this.outs);
    const frame = this.#frame(true);
    try {
      // (A plan's first call learns its results' types from a reply: checked then.)
      if (into !== undefined && frame.outs === null) into = undefined;
      const big = this.#fill(frame, args, into);
      const r = _callPreparedSync(frame.mem, frame.len, frame.reply, frame.cap, frame.status);
      if (r === null) return this.#results(frame, big, into);
      const learnt = this.#learn(r);
      return out === undefined ? learnt : _copyInto(learnt, _outBytes(out, this.outs));
    } finally {
      this.#release(frame, true);
    }
  }

  /**
   * Calls the plan without blocking the event loop while XLA runs. Once its
   * results' types are known, a plan whose program calls no TS target is
   * dispatched on the JS thread (`_dispatchPrepared`): a cheap program's
   * results are returned at once, without a Promise, and a longer one's are
   * waited for on a worker. Otherwise, while other requests run, and with
   * `offThread`, the whole call goes to a worker.
   */
  call(args: readonly _Arg[], offThread = false): XlaArray[] | Promise<XlaArray[]> {
    const frame = this.#frame(false);
    let big: Uint8Array[];
    try {
      big = this.#fill(frame, args);
      if (!offThread && this.#dispatch && frame.outs !== null) {
        const d = this.#dispatchOn(frame);
        if (d instanceof Promise) return this.#settle(frame, big, d);
        if (d === false) this.#dispatch = false;
        else if (d !== undefined) {
          const out = d === null ? this.#results(frame, big) : this.#learn(d);
          this.#release(frame, false);
          return out;
        }
      }
    } catch (e) {
      this.#release(frame, false);
      throw e;
    }
    return this.#settle(
      frame,
      big,
      _callPrepared(frame.mem, frame.len, frame.reply, frame.cap, frame.status),
    );
  }

  /** Dispatches a frame's call on the JS thread; its flags stay set while a worker finishes it. */
  #dispatchOn(frame: Frame): ReturnType<typeof _dispatchPrepared> {
    const words = frame.words;
    words[FLAGS]! |= DISPATCH;
    let d: ReturnType<typeof _dispatchPrepared>;
    try {
      d = _dispatchPrepared(
        frame.mem,
        frame.len,
        frame.reply,
        frame.cap,
        frame.status,
        frame.finish,
      );
    } catch (e) {
      words[FLAGS]! &= STABLE;
      throw e;
    }
    if (!(d instanceof Promise)) words[FLAGS]! &= STABLE;
    return d;
  }

  /** The results of a call a worker answers; the frame is given back after it. */
  async #settle(
    frame: Frame,
    big: Uint8Array[],
    reply: Promise<_Reply<_ResultsReply> | null>,
  ): Promise<XlaArray[]> {
    try {
      const r = await reply;
      return r === null ? this.#results(frame, big) : this.#learn(r);
    } finally {
      frame.words[FLAGS]! &= STABLE;
      this.#release(frame, false);
    }
  }
}

/** The request word (32-bit index) holding its flags: the high half of word 3 (`bridge.py`). */
const FLAGS = 7;
/**
 * Flags: run on the JS thread, or take the results of a call dispatched so;
 * the words are those of the frame's last call.
 */
const DISPATCH = 1, FINISH = 2, STABLE = 4;

/**
 * The bytes of the arrays a call writes its results into (`runSyncInto`'s
 * `out`), checked: one per result, each a typed array (or DataView) whose
 * memory holds exactly its result's bytes, with elements of the result's
 * type (any view of bytes, `Uint8Array` or `DataView`, holds any type),
 * aligned for them, not detached and not on a resizable buffer (V8 gives a
 * shrunk one's pages back while the call writes). Before a plan knows its
 * results' types (`outs` null), only what each array is.
 */
export function _outBytes(
  out: readonly ArrayBufferView[],
  outs: readonly { dtype: DataType; shape: readonly number[]; bytes: number }[] | null,
): Uint8Array[] {
  if (!Array.isArray(out)) {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `out must be an array of typed arrays, one per result; got ${typeof out}`,
    );
  }
  if (outs !== null && out.length !== outs.length) {
    throw new FfiError(
      ErrorCode.INVALID_ARGUMENT,
      `out has ${count(out.length, "array")} but the program returns ${
        count(outs.length, "result")
      }`,
    );
  }
  const bytes: Uint8Array[] = new Array(out.length);
  for (let i = 0; i < out.length; i++) {
    const v = out[i], what = OUT_NAMES[i] ??= `out ${i}`;
    if (!ArrayBuffer.isView(v)) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        `${what}: expected a typed array or DataView, got ${v === null ? "null" : typeof v}`,
      );
    }
    if (_isDetached(v)) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        `${what}: its ArrayBuffer is detached (transferred)`,
      );
    }
    if (_isResizable(v)) {
      throw new FfiError(
        ErrorCode.INVALID_ARGUMENT,
        `${what}: a view of a resizable ArrayBuffer cannot be written by XLA (it may shrink ` +
          `meanwhile); give a fixed-length one`,
      );
    }
    const o = outs?.[i];
    if (o !== undefined) {
      _checkDataSize(o.dtype, o.shape, v.byteLength, "array", what);
      const info = dataTypeInfo(o.dtype);
      const raw = v instanceof Uint8Array || v instanceof DataView;
      if (!raw && v.constructor !== info.typedArray) {
        throw new FfiError(
          ErrorCode.INVALID_ARGUMENT,
          `${what}: ${info.name} results are written into a ${info.typedArray?.name} (or the ` +
            `bytes of a Uint8Array or DataView), got a ${v.constructor.name}`,
        );
      }
      const width = info.typedArray?.BYTES_PER_ELEMENT ?? 1;
      if (v.byteOffset % width !== 0) {
        throw new FfiError(
          ErrorCode.INVALID_ARGUMENT,
          `${what}: starts at byte ${v.byteOffset} of its buffer, not a multiple of the ` +
            `${width} bytes of a ${info.name} element`,
        );
      }
    }
    bytes[i] = new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  }
  return bytes;
}

/** "1 array", "2 arrays". */
const count = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;

/** Results copied into the caller's arrays, returned over them. */
function _copyInto(results: XlaArray[], into: readonly Uint8Array[]): XlaArray[] {
  return results.map((r, i) => {
    const bytes = into[i]!;
    bytes.set(new Uint8Array(r.data.buffer, r.data.byteOffset, r.data.byteLength));
    return { ...r, data: viewAs(r.dtype, bytes) };
  });
}

/** `out i`, made once per position. */
const OUT_NAMES: string[] = [];

/** `argument i`, made once per position (a call names its arguments only when one is bad). */
const ARGUMENT_NAMES: string[] = [];

/**
 * The arguments of a call checked and normalised, without building their
 * names (`argument i`) per call.
 */
export function _normaliseArgs(args: readonly XlaArg[]): _Arg[] {
  const out: _Arg[] = new Array(args.length);
  for (let i = 0; i < args.length; i++) {
    out[i] = _normaliseArg(args[i]!, ARGUMENT_NAMES[i] ??= `argument ${i}`);
  }
  return out;
}

/** `result i`, made once per position. */
const RESULT_NAMES: string[] = [];

/** The result specs of a call checked and normalised, as {@link _normaliseArgs}. */
export function _normaliseSpecs(
  specs: readonly ArraySpec[],
): { dtype: number; shape: number[] }[] {
  const out: { dtype: number; shape: number[] }[] = new Array(specs.length);
  for (let i = 0; i < specs.length; i++) {
    out[i] = _normaliseSpec(specs[i]!, RESULT_NAMES[i] ??= `result ${i}`);
  }
  return out;
}

/** Writes word `i` (64-bit little-endian) of a request. */
function setWord(words: Uint32Array, i: number, v: number): void {
  words[2 * i] = v >>> 0;
  words[2 * i + 1] = Math.floor(v / 0x100000000);
}

/** The address of a view's first byte. */
function address(bytes: Uint8Array): number {
  const p = Deno.UnsafePointer.of(bytes as Uint8Array<ArrayBuffer>);
  if (p === null) throw new FfiError(ErrorCode.INTERNAL, "An array has no address");
  return Number(Deno.UnsafePointer.value(p));
}

/**
 * The hash of an argument signature (element types and shapes), under
 * which {@link _Plans} files its plans.
 */
export function _signatureHash(args: readonly _Arg[]): number {
  let h = args.length;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!, shape = a.shape;
    h = (Math.imul(h, 31) + a.dtype) | 0;
    h = (Math.imul(h, 31) + shape.length) | 0;
    for (let j = 0; j < shape.length; j++) h = (Math.imul(h, 31) + shape[j]!) | 0;
  }
  return h;
}

/**
 * The plans of one program, by argument signature: found by comparing
 * element types and shapes by value (the last one used first), never
 * through a text made of them, so a call allocates nothing to find its plan.
 */
export class _Plans {
  readonly #byHash = new Map<number, _Plan[]>();
  #last: _Plan | undefined;

  /** The plan for these arguments' signature, if one was made. */
  find(args: readonly _Arg[]): _Plan | undefined {
    const last = this.#last;
    if (last !== undefined && last.matches(args)) return last;
    const list = this.#byHash.get(_signatureHash(args));
    if (list === undefined) return undefined;
    for (let i = 0; i < list.length; i++) {
      const p = list[i]!;
      if (p.matches(args)) return this.#last = p;
    }
    return undefined;
  }

  /** Keeps a new plan; the one kept before for its signature wins (an async call made both). */
  add(plan: _Plan, args: readonly _Arg[]): _Plan {
    const had = this.find(args);
    if (had !== undefined) return had;
    const list = this.#byHash.get(plan.hash);
    if (list === undefined) this.#byHash.set(plan.hash, [plan]);
    else list.push(plan);
    return this.#last = plan;
  }
}

/**
 * What an `Xla.ffiCall` plan was made for besides its arguments' element
 * types and shapes: the call's options, normalised (results as specs,
 * attributes encoded with their values as bytes, aliases as pairs, layouts
 * as jax takes them).
 */
export interface _FfiSignature {
  name: string;
  results: readonly { dtype: number; shape: readonly number[] }[];
  attrs: readonly (readonly [string, _AttrJson])[];
  vmapMethod: string | null;
  hasSideEffect: boolean;
  aliases: readonly (readonly [number, number])[];
  layouts: {
    inputLayouts: readonly (readonly number[] | null)[];
    outputLayouts: readonly (readonly number[] | null)[];
  } | null;
}

/**
 * The plans of `Xla.ffiCall`, by target name, argument signature and
 * options, compared by value (attributes by the bytes of their values, so
 * two NaNs with different payloads are different attributes), the last one
 * used first: a repeated call finds its plan without making a text of its
 * signature.
 */
export class _FfiPlans {
  readonly #byName = new Map<string, { sig: _FfiSignature; plan: _Plan }[]>();
  #last: { sig: _FfiSignature; plan: _Plan } | undefined;

  /** The plan made for this signature and these arguments' types, if one was. */
  find(sig: _FfiSignature, args: readonly _Arg[]): _Plan | undefined {
    const last = this.#last;
    if (last !== undefined && sameFfi(last.sig, sig) && last.plan.matches(args)) return last.plan;
    const list = this.#byName.get(sig.name);
    if (list === undefined) return undefined;
    for (let i = 0; i < list.length; i++) {
      const e = list[i]!;
      if (sameFfi(e.sig, sig) && e.plan.matches(args)) {
        this.#last = e;
        return e.plan;
      }
    }
    return undefined;
  }

  /**
   * Keeps a new plan (`sig` is kept as it is: the caller made it for this
   * call and changes it no more); one kept before for the same signature
   * wins (an async call made both).
   */
  add(sig: _FfiSignature, args: readonly _Arg[], plan: _Plan): _Plan {
    const had = this.find(sig, args);
    if (had !== undefined) return had;
    const e = { sig, plan };
    const list = this.#byName.get(sig.name);
    if (list === undefined) this.#byName.set(sig.name, [e]);
    else list.push(e);
    this.#last = e;
    return plan;
  }
}

function sameFfi(a: _FfiSignature, b: _FfiSignature): boolean {
  if (a === b) return true;
  if (
    a.name !== b.name || a.vmapMethod !== b.vmapMethod || a.hasSideEffect !== b.hasSideEffect
  ) return false;
  const ar = a.results, br = b.results;
  if (ar.length !== br.length) return false;
  for (let i = 0; i < ar.length; i++) {
    if (ar[i]!.dtype !== br[i]!.dtype || !sameNumbers(ar[i]!.shape, br[i]!.shape)) return false;
  }
  const aa = a.aliases, ba = b.aliases;
  if (aa.length !== ba.length) return false;
  for (let i = 0; i < aa.length; i++) {
    if (aa[i]![0] !== ba[i]![0] || aa[i]![1] !== ba[i]![1]) return false;
  }
  if (a.layouts !== b.layouts) {
    if (a.layouts === null || b.layouts === null) return false;
    if (!sameLayouts(a.layouts.inputLayouts, b.layouts.inputLayouts)) return false;
    if (!sameLayouts(a.layouts.outputLayouts, b.layouts.outputLayouts)) return false;
  }
  return sameAttrs(a.attrs, b.attrs);
}

function sameNumbers(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function sameLayouts(
  a: readonly (readonly number[] | null)[],
  b: readonly (readonly number[] | null)[],
): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!, y = b[i]!;
    if (x === null || y === null ? x !== y : !sameNumbers(x, y)) return false;
  }
  return true;
}

/** Encoded attributes (sorted by name) equal: scalars and arrays by their bytes (hex). */
function sameAttrs(
  a: readonly (readonly [string, _AttrJson])[],
  b: readonly (readonly [string, _AttrJson])[],
): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (a[i]![0] !== b[i]![0] || !sameAttr(a[i]![1], b[i]![1])) return false;
  }
  return true;
}

function sameAttr(a: _AttrJson, b: _AttrJson): boolean {
  if (a.k !== b.k) return false;
  switch (a.k) {
    case "s":
    case "a": {
      const c = b as typeof a;
      // A PRED scalar holds `v` (a boolean), every other one `x` (its bytes, hex).
      return a.t === c.t && ("v" in a ? "v" in c && a.v === c.v : "x" in c && a.x === c.x);
    }
    case "str":
      return a.v === (b as typeof a).v;
    case "d":
      return sameAttrs(a.v, (b as typeof a).v);
  }
}
