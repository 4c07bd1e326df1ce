/**
 * Context values a TS handler can bind with `.ctx(...)`: the scratch
 * allocator and the thread pool of the calling runtime.
 *
 * @module
 */
import { ErrorCode } from "../abi/enums.ts";
import { FfiError } from "../errors.ts";
import { _auxMessage, _auxValue, _hostLib } from "./_host_state.ts";

function toAddress(p: number | bigint | Deno.PointerValue): number {
  if (typeof p === "number") return p;
  if (typeof p === "bigint") return Number(p);
  return p === null ? 0 : Number(Deno.UnsafePointer.value(p));
}

/**
 * Device (scratch) memory of the calling runtime (`DeviceMemory_Allocate`);
 * everything it allocated is freed when the handler call ends (for an async
 * handler: when its Promise settles), as ffi.h's ScratchAllocator does.
 *
 * @example
 * ```ts ignore
 * Ffi.bind().ctx("scratch").to((scratch) => {
 *   const address = scratch.allocate(1024, 16);
 * });
 * ```
 */
export class ScratchAllocator {
  readonly #api: number;
  readonly #ctx: number;
  #live: number[] = [];

  /** @internal made by the decoder. */
  constructor(api: number, ctx: number) {
    this.#api = api;
    this.#ctx = ctx;
  }

  /** Allocates `size` bytes (alignment a power of two ≤ 16); returns the address. */
  allocate(size: number, alignment?: number): number {
    alignment ??= 16;
    const rc = _hostLib().xla_ffi_deno_ctx_scratch_alloc(this.#api, this.#ctx, size, alignment);
    if (rc !== 0) {
      throw new FfiError(
        ErrorCode.RESOURCE_EXHAUSTED,
        `Failed to allocate scratch memory: ${_auxMessage()}`,
      );
    }
    const address = _auxValue();
    this.#live.push(size, address);
    return address;
  }

  /** Number of allocations not yet freed. */
  get liveAllocations(): number {
    return this.#live.length / 2;
  }

  /** @internal frees everything; failures are reported, never thrown. */
  _release(): void {
    const live = this.#live;
    this.#live = [];
    for (let i = 0; i < live.length; i += 2) {
      const rc = _hostLib().xla_ffi_deno_ctx_scratch_free(
        this.#api,
        this.#ctx,
        live[i]!,
        live[i + 1]!,
      );
      if (rc !== 0) console.error(`deno-xla-ffi: Failed to free scratch memory: ${_auxMessage()}`);
    }
  }
}

/**
 * The calling runtime's intra-op thread pool (`ThreadPool_Schedule`,
 * `ThreadPool_NumThreads`). Tasks are native functions `void task(void*)`.
 *
 * @example
 * ```ts ignore
 * Ffi.bind().ctx("threadPool").to((pool) => console.log(pool.numThreads()));
 * ```
 */
export class ThreadPool {
  readonly #api: number;
  readonly #ctx: number;

  /** @internal made by the decoder. */
  constructor(api: number, ctx: number) {
    this.#api = api;
    this.#ctx = ctx;
  }

  /** Number of threads; 0 when the runtime has no pool (as ffi.h). */
  numThreads(): number {
    return _hostLib().xla_ffi_deno_ctx_num_threads(this.#api, this.#ctx) === 0 ? _auxValue() : 0;
  }

  /** Schedules native `task(data)`; throws FfiError when the runtime refuses. */
  schedule(
    task: number | bigint | Deno.PointerValue,
    data: number | bigint | Deno.PointerValue = 0,
  ): void {
    const rc = _hostLib().xla_ffi_deno_ctx_schedule(
      this.#api,
      this.#ctx,
      toAddress(task),
      toAddress(data),
    );
    if (rc !== 0) {
      throw new FfiError(
        ErrorCode.UNIMPLEMENTED,
        `Failed to schedule task on a thread pool: ${_auxMessage()}`,
      );
    }
  }
}
