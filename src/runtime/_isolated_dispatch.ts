/**
 * A runtime's calls of isolated libraries' handlers: which calls go to a
 * library's process (a handler of one, or a name registered for one), what
 * of a call's options crosses to it, and its answers in the runtime's terms.
 * Private to the runtime.
 *
 * @module
 */
import { ErrorCode, ExecutionStage } from "../abi/enums.ts";
import type { ApiVersion } from "../abi/version.ts";
import { _nativeError, FfiError } from "../errors.ts";
import type { CallFrame } from "./call_frame.ts";
import { _stageHandler, type HandlerStages, type NativeHandler } from "./handler_library.ts";
import type { _IsolatedContext } from "./isolate.ts";
import type { CallOptions, HandlerMetadata, HandlerTarget, ThreadCallResult } from "./runtime.ts";

/**
 * Names registered (through `Runtime.register`) for handlers of isolated
 * libraries, by API version, platform and name, as the native registry
 * scopes them: calls by such a name go to the library's process.
 */
export const _isolatedNames = new Map<string, HandlerStages>();

/** The registry a name is registered in: API version and canonical platform (0 Host, 1 CUDA). */
export function _isolatedScope(apiVersion: ApiVersion, platform: number | undefined): string {
  return `${apiVersion}\0${platform}\0`;
}

/** Records a registered bundle under `name` when one of its handlers is an isolated library's. */
export function _recordIsolated(scope: string, name: string, bundle: HandlerStages): void {
  const ptrs = [bundle.instantiate, bundle.prepare, bundle.initialize, bundle.execute];
  if (ptrs.some((h) => (h as NativeHandler | null | undefined)?._isolated !== undefined)) {
    _isolatedNames.set(scope + name, bundle);
  }
}

/**
 * The isolated library's handler a call targets (directly, or through a
 * name recorded in the runtime's `scope`), or undefined for an in-process call.
 */
export function _isolatedTarget(
  target: HandlerTarget,
  options: CallOptions | undefined,
  scope: string,
): NativeHandler | undefined {
  if (typeof target === "string") {
    if (_isolatedNames.size === 0) return undefined;
    const stages = _isolatedNames.get(scope + target);
    if (stages === undefined) return undefined;
    const h = _stageHandler(stages, options?.stage ?? ExecutionStage.EXECUTE);
    return h === null ? undefined : (h as NativeHandler);
  }
  if (typeof target !== "object" || target === null) return undefined;
  if ((target as NativeHandler)._isolated !== undefined) return target as NativeHandler;
  return undefined;
}

/** What of a call's options crosses to an isolated library's process. */
export function _isolatedContext(
  frame: CallFrame,
  options: CallOptions | undefined,
  apiVersion: ApiVersion,
  cuda: boolean,
): _IsolatedContext {
  frame._live();
  if (frame._hostBuffers !== 0) frame._checkHost();
  if (cuda) {
    throw new FfiError(
      ErrorCode.UNIMPLEMENTED,
      "Isolated handler libraries run on Host runtimes only (their process has no CUDA context)",
    );
  }
  if (options?.userData !== undefined || options?.instance !== undefined) {
    throw new FfiError(
      ErrorCode.UNIMPLEMENTED,
      "userData and instance are pointers into this process: an isolated handler cannot use them",
    );
  }
  const ordinal = options?.deviceOrdinal ?? -1;
  if (!Number.isInteger(ordinal) || ordinal < -2147483648 || ordinal > 2147483647) {
    throw new FfiError(ErrorCode.INVALID_ARGUMENT, `Invalid device ordinal ${ordinal}`);
  }
  return {
    minor: Number(apiVersion.slice(2)),
    stage: options?.stage ?? ExecutionStage.EXECUTE,
    runId: BigInt(options?.runId ?? -1),
    deviceOrdinal: ordinal,
  };
}

/** The counts of an isolated `callOnThreads`, with its first failure as an FfiError. */
export function _isolatedThreadResult(
  r: { ok: number; failed: number; code: number; message: string },
): ThreadCallResult {
  const result: ThreadCallResult = { ok: r.ok, failed: r.failed };
  if (r.failed > 0) {
    result.firstError = _nativeError(r.code, r.message, { failed: true });
  }
  return result;
}

/** An isolated library's handler's metadata, queried in its process as `apiVersion` does. */
export function _isolatedMetadata(h: NativeHandler, apiVersion: ApiVersion): HandlerMetadata {
  const [major, minor, traits, stateTypeId] = h._isolated!.metadata(
    h.name,
    Number(apiVersion.slice(2)),
  );
  return {
    apiVersion: { major: major!, minor: minor! },
    traits: traits!,
    stateTypeId: stateTypeId!,
  };
}
