/**
 * TS handlers with different bindings for the fuzzer's raw target (mutated
 * call frames fed to their entry points directly, as XLA calls them): typed
 * buffers, optional and remaining operands, every attribute kind, enums,
 * dictionaries, context values, state, a wrong stage, errors thrown and
 * rejected, and async handlers. Shared by tests/fuzz_handler_test.ts.
 */
import {
  DataType,
  Dictionary,
  Ffi,
  FfiError,
  Future,
  type Handler,
  type RemainingBuffers,
} from "../mod.ts";
import { RawExpect } from "./_fuzz.ts";

const D = DataType;

/** Calls that reached each TS function (the frame passed the entry point's checks). */
export interface FuzzHandlerCounts {
  [name: string]: number;
}

let sink = 0;

function walkBuffers(r: RemainingBuffers): void {
  for (let i = 0; i < r.size; i++) {
    const b = r.get(i);
    const t = b.typed();
    sink += b.rank + (t.length > 0 ? Number(t[0]) || 0 : 0) + (t.length > 1 ? 1 : 0);
  }
}

function walkDict(d: Dictionary, depth = 0): void {
  for (const k of d.keys()) {
    sink += d.typeOf(k) ?? 0;
    const v = d.get(k);
    if (v instanceof Dictionary) walkDict(v, depth + 1);
    else if (Array.isArray(v)) sink += v.length;
    else if (typeof v === "string") sink += v.length;
    else sink += Number(v) || 0;
  }
}

/** A set of TS handlers and the calls each received; close() releases them. */
export class FuzzHandlers {
  readonly counts: FuzzHandlerCounts = {};
  readonly handlers: Handler[] = [];
  /** What each handler does with a valid frame (the fuzzer checks it did). */
  readonly expect: RawExpect[] = [];
  /** Promises of async handlers still running (awaited by settle()). */
  #pending = new Set<Promise<unknown>>();

  constructor() {
    const n = (name: string) => this.counts[name] = (this.counts[name] ?? 0) + 1;
    const add = (h: Handler, expect: RawExpect) => {
      this.handlers.push(h);
      this.expect.push(expect);
    };
    // Every operand, any shape: succeeds on every well-formed frame.
    add(
      Ffi.bind().remainingArgs().remainingRets().attrs().to((args, rets, attrs) => {
        n("walk");
        walkBuffers(args);
        walkBuffers(rets);
        walkDict(attrs);
      }),
      RawExpect.OK,
    );
    // The same, async (XLA future completed when the Promise settles).
    add(
      Ffi.bind().remainingArgs().remainingRets().attrs().to(async (args, rets, attrs) => {
        n("walkAsync");
        await null;
        walkBuffers(args);
        walkBuffers(rets);
        walkDict(attrs);
      }),
      RawExpect.OK,
    );
    // Typed buffers of fixed dtype and rank, and bound attributes of several kinds.
    add(
      Ffi.bind().arg(D.F32, 2).arg(D.S32).ret(D.F32).attr("n00_a", "i32").attr("n01_b", "f32[]")
        .to((x, y, out, a, b) => {
          n("typed");
          out.typed()[0] = x.typed()[0]! + y.typed()[0]! + a + b.length;
        }),
      RawExpect.TYPED,
    );
    // Optional operands around remaining ones.
    add(
      Ffi.bind().arg().optionalArg(D.F64).remainingArgs().optionalRet().remainingRets().attrs()
        .to((a, b, rest, r, rrest, attrs) => {
          n("optional");
          sink += a.rank + (b?.rank ?? 0) + rest.size + (r?.rank ?? 0) + rrest.size + attrs.size;
        }),
      RawExpect.OPTIONAL,
    );
    // Every attribute kind by name: six attributes, and the fuzzer's frames have at most
    // five, so always a decode error.
    add(
      Ffi.bind().attr("n00_a", "string").attr("n01_b", "dict").attr("n02_c", "bool")
        .attr("n03_d", "pointer").attr("n04_e", "u8[]").enumAttr("n05_f", "i32", [0, 1, 2])
        .to((s, d, b, p, arr, e) => {
          n("attrKinds");
          sink += s.length + d.size + (b ? 1 : 0) + p + arr.length + e;
        }),
      RawExpect.FAIL,
    );
    // Context values: run id, device ordinal, scratch, thread pool, user data. The host
    // platform has no device memory: the scratch allocation throws.
    add(
      Ffi.bind().remainingArgs().remainingRets().attrs().ctx("runId").ctx("deviceOrdinal")
        .ctx("scratch").ctx("threadPool").userData(77)
        .to((_a, _r, _d, runId, ordinal, scratch, pool, user) => {
          n("ctx");
          const p = scratch.allocate(64);
          sink += runId + ordinal + (p ? 1 : 0) + pool.numThreads() + (user ? 1 : 0);
        }),
      RawExpect.FAIL,
    );
    // A stream on the host platform: the context helper's error.
    add(Ffi.bind().ctx("stream").to(() => void n("stream")), RawExpect.FAIL);
    // State that no instantiate handler set: a decode error.
    add(Ffi.bind().remainingArgs().state().to(() => void n("state")), RawExpect.FAIL);
    // Bound to another stage: the entry point rejects execute-stage frames.
    add(Ffi.bindInstantiate().to(() => void n("instantiate")), RawExpect.FAIL);
    // A token argument (the fuzzer's frames have none: a decode error).
    add(Ffi.bind().token().remainingArgs().to(() => void n("token")), RawExpect.FAIL);
    // Errors by the argument count: thrown FfiError (its code), TypeError, a non-Error,
    // a rejected Promise, a failed Future (the last two: the call returns a future).
    add(
      Ffi.bind().remainingArgs().remainingRets().attrs().to((args) => {
        n("throws");
        switch (args.size % 5) {
          case 0:
            throw new FfiError(1 + (args.size % 16), `fuzz error ${args.size}`);
          case 1:
            throw new TypeError("fuzz type error");
          case 2:
            throw "fuzz string";
          case 3:
            return this.#track(Promise.reject(new RangeError("fuzz rejection")));
          default:
            return Future.failed(new FfiError(8, "fuzz failed future"));
        }
      }, { async: false }),
      RawExpect.THROWS,
    );
  }

  #track(p: Promise<unknown>): Promise<unknown> {
    const t = p.catch(() => {}).finally(() => this.#pending.delete(t));
    this.#pending.add(t);
    return p;
  }

  /** The entry points. */
  pointers(): Deno.PointerObject[] {
    return this.handlers.map((h) => h.pointer);
  }

  /** Total calls that reached a TS function. */
  get total(): number {
    return Object.values(this.counts).reduce((a, b) => a + b, 0);
  }

  /** Lets pending async handlers settle (their futures complete). */
  async settle(): Promise<void> {
    await Promise.all([...this.#pending]);
    for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
  }

  /** Releases every entry point. */
  close(): void {
    for (const h of this.handlers) h.close();
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

/** Keeps the walk's reads observable. */
export function _sink(): number {
  return sink;
}
