/**
 * The one check of a runtime call's frame and options (`callSync`, `call`,
 * `callOnThreads`, `instantiate`, and the calls `ffiCall` makes), and the
 * conversion of `userData`. Private to the runtime.
 *
 * @module
 */
import { ErrorCode } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import { CallFrame } from "./call_frame.ts";
import { Instance } from "./instance.ts";
import type { CallOptions } from "./runtime.ts";

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function bad(message: string): never {
  throw new FfiError(ErrorCode.INVALID_ARGUMENT, message);
}

/** A value as an argument error shows it (never throws, whatever the value). */
export function _show(v: unknown): string {
  switch (typeof v) {
    case "string":
      return `the string ${JSON.stringify(v.length > 40 ? v.slice(0, 40) + "…" : v)}`;
    case "bigint":
      return `${v}n`;
    case "symbol":
      return v.toString();
    case "function":
      return "a function";
    case "object": {
      if (v === null) return "null";
      if (Array.isArray(v)) return `an array of length ${v.length}`;
      let name: unknown;
      try {
        const proto = Object.getPrototypeOf(v);
        if (proto === null) return "a pointer or null-prototype object";
        name = proto.constructor?.name;
      } catch {
        name = undefined;
      }
      return typeof name === "string" && name !== "Object" ? `a ${name}` : "an object";
    }
    default:
      return String(v);
  }
}

/** True for a stage of {@link ExecutionStage} (0..3). */
function isStage(s: unknown): boolean {
  return s === 0 || s === 1 || s === 2 || s === 3;
}

/** True for a run id: a safe integer number or an int64 bigint. */
function isRunId(v: unknown): boolean {
  return typeof v === "number"
    ? Number.isSafeInteger(v)
    : typeof v === "bigint" && v >= INT64_MIN && v <= INT64_MAX;
}

/** True for an int32 integer. */
function isInt32(v: unknown): boolean {
  return typeof v === "number" && Number.isInteger(v) && v >= -2147483648 && v <= 2147483647;
}

/**
 * Checks a runtime call's frame and options (FfiError INVALID_ARGUMENT
 * naming `what` and the argument or option): `frame` is a {@link CallFrame};
 * `options` is absent (`undefined`) or an object whose `stage` is an
 * `ExecutionStage` (0..3), `runId` a safe integer or an int64 bigint,
 * `deviceOrdinal` an int32 integer, `userData` a Map or an iterable (its
 * entries are checked where they are converted, {@link _userData}) and
 * `instance` an {@link Instance}; an option that is `undefined` or `null` is
 * absent. Property reads and type tests only: nothing is allocated for
 * valid options.
 */
export function _checkCall(frame: unknown, options: unknown, what: string): void {
  if (!(frame instanceof CallFrame)) {
    bad(`${what}: frame must be a CallFrame (from CallFrameBuilder.build()), got ${_show(frame)}`);
  }
  if (options === undefined) return;
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    bad(`${what}: options must be an object ({ stage, runId, … }), got ${_show(options)}`);
  }
  const { stage, runId, deviceOrdinal, userData, instance } = options as CallOptions;
  if (stage != null && !isStage(stage)) {
    bad(
      `${what}: stage must be an ExecutionStage (0 INSTANTIATE, 1 PREPARE, 2 INITIALIZE, ` +
        `3 EXECUTE), got ${_show(stage)}`,
    );
  }
  if (runId != null && !isRunId(runId)) {
    bad(`${what}: runId must be a safe integer or an int64 bigint, got ${_show(runId)}`);
  }
  if (deviceOrdinal != null && !isInt32(deviceOrdinal)) {
    bad(`${what}: deviceOrdinal must be an int32 integer, got ${_show(deviceOrdinal)}`);
  }
  if (
    userData != null &&
    (typeof userData !== "object" ||
      typeof (userData as Iterable<unknown>)[Symbol.iterator] !== "function")
  ) {
    bad(
      `${what}: userData must be a Map or an iterable of [typeId, pointer] pairs, ` +
        `got ${_show(userData)}`,
    );
  }
  if (instance != null && !(instance instanceof Instance)) {
    bad(
      `${what}: instance must be a handler Instance (from Runtime.instantiate), ` +
        `got ${_show(instance)}`,
    );
  }
}

/** A pointer object (what `Deno.UnsafePointer` hands out). */
function isPointerObject(p: unknown): p is Deno.PointerObject {
  return typeof p === "object" && p !== null && Object.getPrototypeOf(p) === null;
}

/**
 * `userData` (checked by {@link _checkCall}) as the native list, `[id,
 * address]` after each other, and its length in pairs. Each entry is a
 * `[typeId, pointer]` pair: the id a non-negative safe integer or int64
 * bigint, the pointer a pointer object. As XLA's InsertUserData, a null
 * pointer is INVALID_ARGUMENT and an id given twice ALREADY_EXISTS.
 */
export function _userData(
  userData: Exclude<CallOptions["userData"], undefined>,
  what: string,
): [BigInt64Array<ArrayBuffer>, number] {
  const pairs: unknown[] = [...(userData as Iterable<unknown>)];
  const user = new BigInt64Array(pairs.length * 2);
  const seen = new Set<bigint>();
  for (let n = 0; n < pairs.length; n++) {
    const pair = pairs[n];
    if (!Array.isArray(pair) || pair.length !== 2) {
      bad(`${what}: userData entry ${n} must be a [typeId, pointer] pair, got ${_show(pair)}`);
    }
    const [id, p] = pair as [unknown, unknown];
    if (
      !(typeof id === "number" ? Number.isSafeInteger(id) && id >= 0 : typeof id === "bigint" &&
        id >= 0n && id <= INT64_MAX)
    ) {
      bad(
        `${what}: userData entry ${n}: the type id must be a non-negative safe integer or ` +
          `int64 bigint, got ${_show(id)}`,
      );
    }
    // XLA execution_context.cc InsertUserData: "User data must be not null",
    // "User data with type id %d already exists in execution context".
    if (p === null) bad("User data must be not null");
    if (!isPointerObject(p)) {
      bad(
        `${what}: userData entry ${n}: the pointer must be a pointer object ` +
          `(Deno.UnsafePointer.of(…)), got ${_show(p)}`,
      );
    }
    const typeId = BigInt(id as number | bigint);
    if (seen.has(typeId)) {
      throw new FfiError(
        ErrorCode.ALREADY_EXISTS,
        `User data with type id ${typeId} already exists in execution context`,
      );
    }
    seen.add(typeId);
    user[2 * n] = typeId;
    user[2 * n + 1] = BigInt(Deno.UnsafePointer.value(p));
  }
  return [user, pairs.length];
}
