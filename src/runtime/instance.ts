/**
 * Handler instances: XLA's per-call-site execution state, which the
 * instantiate stage creates and later stages use through `State_Get`.
 *
 * @module
 */
import { ErrorCode, ExecutionStage } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import { native } from "../native/lib.ts";

/**
 * A handler instance (XLA's per-call-site execution state): created by
 * {@link Runtime.instantiate}; closing it runs the state's deleter.
 *
 * @example
 * ```ts ignore
 * await using inst = await rt.instantiate(bundle, frame);
 * rt.callSync(bundle, frame, { instance: inst });
 * ```
 */
export class Instance {
  /** @internal */
  _ptr: Deno.PointerObject | null;
  /** @internal calls in flight that use this instance. */
  _inflight = 0;

  /** @internal use {@link Runtime.instantiate}. */
  constructor(ptr: Deno.PointerObject) {
    this._ptr = ptr;
  }

  /** @internal */
  _live(): Deno.PointerObject {
    if (this._ptr === null) {
      throw new FfiError(ErrorCode.FAILED_PRECONDITION, "The handler instance is closed");
    }
    return this._ptr;
  }

  /** The instantiate stage's state type id, or `undefined` when no state is set. */
  get stateTypeId(): number | undefined {
    return this.stateTypeIdOf(ExecutionStage.INSTANTIATE);
  }

  /**
   * The type id of the state a stage set (instantiate; prepare and initialize
   * under API 0.3), or `undefined` when it set none.
   */
  stateTypeIdOf(stage: ExecutionStage): number | undefined {
    const out = new BigInt64Array(1);
    const has = native().xla_ffi_deno_runtime_instance_state(this._live(), stage, out);
    return has ? Number(out[0]) : undefined;
  }

  /** Runs the state's deleter and frees the instance. Fails while a call uses it. */
  close(): void {
    if (this._ptr === null) return;
    if (this._inflight > 0) {
      throw new FfiError(
        ErrorCode.FAILED_PRECONDITION,
        `The handler instance is used by ${this._inflight} call(s) in flight; await them first`,
      );
    }
    native().xla_ffi_deno_runtime_instance_free(this._ptr);
    this._ptr = null;
  }

  /** Same as {@link close}. */
  [Symbol.dispose](): void {
    this.close();
  }
}

/** A new, empty handler instance (RESOURCE_EXHAUSTED when out of memory). */
export function _newInstance(): Instance {
  const ptr = native().xla_ffi_deno_runtime_instance_new();
  if (ptr === null) throw new FfiError(ErrorCode.RESOURCE_EXHAUSTED, "Out of memory");
  return new Instance(ptr);
}
