/**
 * The command line's help texts: general, and one per command, each ending
 * with the exit codes.
 *
 * @module
 */
import { EXIT_CODES_TEXT } from "./exit_code.ts";

const RUN_TEXT = `Usage: cli run <lib.so | handlers.ts> <handler> [options]

Calls one XLA FFI handler (a symbol of a shared library, or an export of a
TS/JS module) in the embedded runtime and prints its results. A module's
export is a TS handler (Ffi.bind()...to(fn)) or a HandlerBundle; a bundle's
instantiate stage runs once before the calls, and the module's handlers are
closed after them.

Options:
  --arg SPEC         an argument, in order: dtype[d0,d1,...]=v0,v1,...
                     (one value fills the array, an empty one needs none;
                     dtype=v is a scalar), 'token', or a file ending in .npy
  --ret SPEC         a result, in order: dtype[d0,d1,...], dtype, 'token', or
                     like:N (the dtype and shape of argument N, from 0)
  --out FILE.npy     write result i to the i-th --out file (others are printed)
  --expect REF.npy   compare result i with the i-th --expect file, as
                     numpy.testing.assert_allclose does (exit code 7 and
                     numpy's report on a mismatch)
  --rtol R           relative tolerance of --expect (default 1e-7)
  --atol A           absolute tolerance of --expect (default 0)
  --attr NAME=VALUE  an attribute: a string unless typed as TYPE:V (f32:2.5,
                     bool:true, u8:7), TYPE[]:V,V,... (array, i64[]:0,2) or
                     str:TEXT; NAME may be dotted (cfg.scale=f32:2 makes a
                     dictionary cfg)
  --stage STAGE      execute (default), instantiate, prepare or initialize
  --instantiate H    first run handler H (same library or module; of a
                     bundle, its instantiate stage) in the instantiate stage
                     with the attributes only; the calls use the state it sets
  --type NAME=SYM    register a state type under NAME with the library's type
                     id function XLA_FFI_TypeId* SYM(void) (ffi.h's
                     XLA_FFI_DECLARE_TYPE_ID_SYMBOL) before the handlers are
                     asked; without it, a handler whose state type has no id
                     gets every *_type_id function of the library registered
  --platform P       host (default) or cuda: arguments are copied to device
                     buffers and results back after each call (exit code 5
                     without a CUDA driver; $XLA_FFI_DENO_CUDA names one)
  --repeat N         call N times and report median/min/max time
  --threads N        worker threads of the runtime's pool
  --guard            guard the buffers: a write past an operand's end, before
                     its start or into an argument is an error naming the
                     operand and the byte offset (canaries and argument
                     copies checked after each call; host platform)
  --timeout MS       a shared-library handler that has not returned after MS
                     milliseconds is killed (exit code 8)
  --json             print one JSON object instead of text
  -h, --help         this help

Types: pred (bool), s8 s16 s32 s64 (i8 ... i64), u8 u16 u32 u64, f16 bf16
f32 f64, c64 c128 (values 1+2j), f8 types (f8e5m2, f8e4m3fn, ...), token.
Integers may be written 0x.., 0o.., 0b..; floats as inf, -inf, nan.

A Python extension module's handlers (jaxlib's LAPACK, nanobind modules):
'run --python-module M <handler>' hosts Python with jax ($XLA_FFI_DENO_PYTHON)
and runs one of the handlers M.registrations() hands out, in a child process;
--initialize F calls M.F() first (jaxlib.cpu._lapack needs initialize),
--module-platform P takes platform P's (default cpu).

Examples:
  cli run ./libscale.so scale --arg f32[2,3]=1,2,3,4,5,6 --ret f32[2,3] \\
      --attr alpha=f32:2.5 --repeat 100
  cli run examples/handlers.ts counter --attr start=i64:41 --ret s64
  cli run ./libgpu.so scale --platform cuda --arg x.npy --ret f32[1024]
  cli run ./librms.so rms_norm --arg x.npy --ret like:0 --attr eps=f32:1e-5 \\
      --expect ref.npy --rtol 1e-6
  cli run --python-module jaxlib.cpu._lapack --initialize initialize \\
      lapack_sgetrf_ffi --arg f32[2,2]=4,6,3,3 --ret f32[2,2] --ret s32[2] --ret s32`;

const INSPECT_TEXT = `Usage: cli inspect <lib.so> [--all] [--verbose] [--json]
       cli inspect --signature <lib.so> <handler> [--arg HINT] [--attr HINT]
                   [--instantiate H] [--type NAME=SYMBOL]

Lists the exported functions of a shared library that answer the XLA FFI
metadata query, with the API version and traits each reports. Handlers are
C functions (XLA_FFI_DEFINE_HANDLER_SYMBOL makes them extern "C"), so only
exports with C linkage are asked; C++ (mangled) ones are counted. The
queries run in a child process: an export that crashes it, ends it or does
not answer within 5 s is skipped, and the rest go on in a new child.

Options:
  --all        also ask C++ functions (shown demangled, with c++filt when it
               is installed), except member functions, which are never
               handlers; 'run' takes a C++ handler by its symbol or its
               demangled name
  --verbose    list each skipped export with the reason, and the C++
               functions not asked
  --json       print one JSON object instead of text: {library, machine,
               exportedFunctions, handlers: [{symbol, name, apiVersion,
               traits}] | null, skipped: [{symbol, name, reason}],
               notQueried: [{symbol, name, reason}], error: {code, message}
               | null}
  -h, --help   this help

'inspect --python-module M [--initialize F] [--module-platform P] [--json]'
lists the handlers a Python extension module hands out from M.registrations()
(jaxlib.cpu._lapack, nanobind modules), hosting Python with jax
($XLA_FFI_DENO_PYTHON); legacy custom calls and foreign capsules are listed as
skipped with the reason.

'inspect --signature lib.so NAME' finds what a frame must hold for handler
NAME to decode (arguments, results, attributes, each buffer's dtype and rank)
by calling it with probing frames in a child process and reading ffi.h's
decode diagnostics, and prints it as ffiCall options and a 'run' line. What
probing cannot tell (variadic arguments, untyped buffers, dictionary
attributes) is listed; --arg SPEC and --attr NAME=TYPE:VALUE give it. A
stateful handler (ffi.h's Ctx<State<T>>) is probed with its state:
--instantiate H runs handler H in the instantiate stage before each probe,
with the state types the library exports registered (or --type NAME=SYMBOL).`;

const FUZZ_TEXT = `Usage: cli fuzz <lib.so> <handler> [options]
       cli fuzz --python-module M [--initialize F] <handler> [options]

Fuzzes one handler of a shared library: discovers its signature (as
'inspect --signature'), then calls it with generated arguments and
attributes (sizes 0, 1, odd, prime, past a cache line or a page; values at
their edges: +-0, NaN, +-Inf, denormals, integer limits; attributes at their
edges and near the call's dimensions) in a child process with guarded
buffers. A failure is a fatal signal, a write outside a result or into an
argument, a call that does not return within --timeout, a result that
differs between two calls with the same input, or an error code outside
XLA's range. Each distinct failure is shrunk, its arguments written as .npy
files, and the 'run' line that reproduces it printed.

Options:
  --runs N           generated calls at most (default 1000)
  --seconds S        stop after S seconds
  --seed N           the seed (default 1): the same seed gives the same calls
  --ret RULE         a result's shape, in order: like:N, or a shape over the
                     arguments' dimensions, 's32[$0.1]' (dimension 1 of
                     argument 0), 'f32[$0.0,$1.1]'; without rules each result
                     is like:0 and writes outside results do not count
  --arg HINT         an argument's dtype and rank (f32[4,3], or as 'run'
                     takes it), in order; more than discovered adds arguments
  --attr HINT        an attribute: NAME=TYPE:VALUE sends that value (as
                     'run'); NAME=TYPE:{V1,V2} draws from the choices
                     (uplo=u8:{76,85}, or u8:{'L','U'} with characters);
                     NAME=TYPE:[LO,HI] from the range, ends included;
                     NAME=TYPE:* gives the type only (values are varied)
  --instantiate H    a stateful handler: each call first runs handler H (same
                     library) in the instantiate stage, a fresh state per call
  --type NAME=SYMBOL a state type to register (default with --instantiate:
                     every type id function the library exports, *_type_id)
  --values I=SPEC    the values argument I may hold, its contract: [LO,HI]
                     (a range), index:$A.D (indices into dimension D of
                     argument A), offsets:$A.D (ascending from 0 to that
                     dimension: CSR row pointers), sorted (ascending);
                     comma-separated, e.g. --values '2=index:$3.0'
                     --values '1=offsets:$0.0' --values '1=[0,5],sorted'
  --timeout MS       a call that takes longer is a hang (default 1000)
  --sanitize address run the library under AddressSanitizer (built with it)
  --out DIR          where the failures' .npy files go (default fuzz-failures)
  --json             print one JSON object instead of text
  -h, --help         this help

A Python extension module's handler: 'fuzz --python-module M <handler>'
runs it in a child process that hosts the Python of $XLA_FFI_DENO_PYTHON and
imports M (--initialize F calls M.F() first, --module-platform P takes
platform P's handlers, default cpu); a crash ends that process, not this one,
and is reported with a 'run --python-module' line.

Exit code 9 when a failure was found, 0 when none.`;

/**
 * The help text: general, or for `run` or `inspect`; always lists the exit
 * codes.
 *
 * @example
 * ```ts
 * import { usage } from "../args.ts";
 * console.log(usage("run").split("\n")[0]); // "Usage: cli run <lib.so | handlers.ts> <handler> [options]"
 * ```
 */
export function usage(topic?: "run" | "inspect" | "fuzz"): string {
  if (topic === "run") return `${RUN_TEXT}\n\n${EXIT_CODES_TEXT}\n`;
  if (topic === "fuzz") return `${FUZZ_TEXT}\n\n${EXIT_CODES_TEXT}\n`;
  if (topic === "inspect") return `${INSPECT_TEXT}\n\n${EXIT_CODES_TEXT}\n`;
  return `Usage: cli <command> [options]

Runs and inspects XLA FFI handlers without XLA.

Commands:
  run <lib.so | handlers.ts> <handler>   call a handler with given arguments
  inspect <lib.so>                       list the handlers a library exports
  inspect --signature <lib.so> <handler> discover what a handler takes
  fuzz <lib.so> <handler>                fuzz a handler, shrink and report failures
  help [command]                         help for a command

Run as 'deno run -A jsr:@deno-xla/ffi/cli <command>' or 'deno task cli <command>'.

${EXIT_CODES_TEXT}
`;
}
