/**
 * Leak checks for tests: fail a test that leaves objects of this module
 * open (call frames, TS handlers, runtimes, handler libraries, XLA
 * programs and hosts), naming each one and where it was made.
 *
 * Objects made while tracking is on are recorded with their creation stack
 * (only then: normal use pays nothing for it); closing one removes its
 * record. An object collected without `close()` has its native part
 * reclaimed, but is still reported: it was forgotten.
 *
 * Wrap a test body with {@link withLeakCheck}, or start tracking with
 * {@link trackResources} and check at the end with
 * {@link ResourceTracker.assertNoneOpen} (or {@link assertNoOpenResources}
 * for everything tracked).
 *
 * @example
 * ```ts
 * import { CallFrameBuilder, Ffi, Runtime } from "@deno-xla/ffi";
 * import { withLeakCheck } from "./leaks.ts";
 *
 * Deno.test("closes what it opens", withLeakCheck(() => {
 *   using rt = new Runtime({ threads: 0 });
 *   using frame = new CallFrameBuilder().build();
 *   using h = Ffi.bind().to(() => {});
 *   rt.callSync(h, frame);
 * }));
 * ```
 *
 * @module
 */
import { _forget, _openResources, type _ResourceRecord, _tracking } from "../_resources.ts";

/**
 * An object of this module that was not closed.
 *
 * @example
 * ```ts
 * import { Runtime } from "@deno-xla/ffi";
 * import { trackResources } from "./leaks.ts";
 * using tracker = trackResources();
 * const rt = new Runtime({ threads: 0 });
 * const [open] = tracker.open();
 * console.log(open?.kind, open?.where); // "Runtime", "file:///…:4:12"
 * rt.close();
 * ```
 */
export interface OpenResource {
  /** What it is: `CallFrame`, `Handler`, `Runtime`, `HandlerLibrary`, `XlaProgram` or `Xla`. */
  readonly kind: string;
  /** Where it was made: the first stack frame outside this module (`file:line:column`). */
  readonly where: string;
  /** The whole stack where it was made. */
  readonly stack: string;
  /** True when it was collected without `close()` (its native part was reclaimed then). */
  readonly collected: boolean;
}

/**
 * The error a leak check throws: one line per object left open.
 *
 * @example
 * ```ts
 * import { CallFrameBuilder } from "@deno-xla/ffi";
 * import { LeakError, trackResources } from "./leaks.ts";
 * using tracker = trackResources();
 * const frame = new CallFrameBuilder().build();
 * try {
 *   tracker.assertNoneOpen();
 * } catch (e) {
 *   console.log(e instanceof LeakError && e.resources.length); // 1
 * }
 * frame.close();
 * ```
 */
export class LeakError extends Error {
  /** The objects left open. */
  readonly resources: readonly OpenResource[];

  /**
   * Makes the error for these objects.
   *
   * @param resources the objects left open
   */
  constructor(resources: readonly OpenResource[]) {
    super(describe(resources));
    this.name = "LeakError";
    this.resources = resources;
  }
}

function describe(resources: readonly OpenResource[]): string {
  const lines = resources.map((r) =>
    `  ${r.kind} made at ${r.where}` +
    (r.collected ? " (collected without close(); its native part was reclaimed)" : "")
  );
  const n = resources.length;
  return `${n} object${n === 1 ? "" : "s"} of @deno-xla/ffi left open (close them, or use ` +
    `\`using\`):\n${lines.join("\n")}`;
}

function snapshot(r: _ResourceRecord): OpenResource {
  return { kind: r.kind, where: r.where, stack: r.stack, collected: r.collected };
}

/**
 * Records the objects of this module made from its start until it is
 * stopped (`stop()`, or `using`). Trackers nest; each sees what was made
 * while it ran.
 *
 * @example
 * ```ts
 * import { CallFrameBuilder } from "@deno-xla/ffi";
 * import { trackResources } from "./leaks.ts";
 * using tracker = trackResources();
 * using frame = new CallFrameBuilder().build();
 * console.log(tracker.open().length); // 1: the frame, still open
 * ```
 */
export class ResourceTracker implements Disposable {
  #before: Set<_ResourceRecord>;
  #running = true;

  /** @internal use {@link trackResources}. */
  constructor() {
    this.#before = new Set(_openResources());
    _tracking(1);
  }

  /** The objects made since this tracker started that are not closed. */
  open(): OpenResource[] {
    return this.#records().map(snapshot);
  }

  /**
   * Throws a {@link LeakError} naming each object made since this tracker
   * started that is not closed (they are reported once).
   */
  assertNoneOpen(): void {
    const left = this.#records();
    if (left.length === 0) return;
    _forget(left);
    throw new LeakError(left.map(snapshot));
  }

  #records(): _ResourceRecord[] {
    return _openResources().filter((r) => !this.#before.has(r));
  }

  /** Stops recording (objects made afterwards are not tracked). */
  stop(): void {
    if (!this.#running) return;
    this.#running = false;
    _tracking(-1);
  }

  /** Same as {@link stop}. */
  [Symbol.dispose](): void {
    this.stop();
  }
}

/**
 * Starts recording the objects of this module made from now on, with where
 * each was made.
 *
 * @example
 * ```ts
 * import { Runtime } from "@deno-xla/ffi";
 * import { trackResources } from "./leaks.ts";
 * using tracker = trackResources();
 * using rt = new Runtime({ threads: 0 });
 * rt.close();
 * tracker.assertNoneOpen(); // passes: the runtime was closed
 * ```
 */
export function trackResources(): ResourceTracker {
  return new ResourceTracker();
}

/**
 * Throws a {@link LeakError} naming every tracked object (made while any
 * tracker ran) that is not closed.
 *
 * @example
 * ```ts
 * import { CallFrameBuilder } from "@deno-xla/ffi";
 * import { assertNoOpenResources, trackResources } from "./leaks.ts";
 * using _tracker = trackResources();
 * const frame = new CallFrameBuilder().build();
 * frame.close();
 * assertNoOpenResources();
 * ```
 */
export function assertNoOpenResources(): void {
  const left = _openResources();
  if (left.length === 0) return;
  _forget(left);
  throw new LeakError(left.map(snapshot));
}

/**
 * Wraps a test body: it runs with tracking on, and the test fails with a
 * {@link LeakError} when it leaves an object of this module open. When the
 * body itself fails, that failure is reported instead.
 *
 * @example
 * ```ts
 * import { CallFrameBuilder } from "@deno-xla/ffi";
 * import { withLeakCheck } from "./leaks.ts";
 * Deno.test("frames are closed", withLeakCheck(async () => {
 *   await using _x = { [Symbol.asyncDispose]: async () => {} };
 *   using _frame = new CallFrameBuilder().build();
 * }));
 * ```
 */
export function withLeakCheck<T = Deno.TestContext>(
  fn: (t: T) => void | Promise<void>,
): (t: T) => Promise<void> {
  return async (t: T) => {
    const tracker = new ResourceTracker();
    try {
      await fn(t);
      tracker.assertNoneOpen();
    } finally {
      tracker.stop();
    }
  };
}
