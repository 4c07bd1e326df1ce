/**
 * jaxlib's LAPACK handlers as jax lowers them (batched, column-major
 * layouts, aliases, LAPACK character attributes) in F32/F64/C64/C128, with
 * one body per routine on both hosts (tests/_xla_lapack_cases.ts), checked
 * against numpy and scipy. The walk-through is docs/jax-extension-modules.md.
 */
import { runXlaCase, XLA_SKIP, xlaName } from "./_xla_env.ts";

const script = new URL("./_xla_lapack_cases.ts", import.meta.url);
for (const [host, title] of [["runtime", "the embedded runtime"], ["xla", "real XLA"]]) {
  Deno.test({
    name: xlaName(
      `xla lapack: getrf, geqrf, potrf, syevd/heevd, gesdd, trsm × f32/f64/c64/c128, batched, ` +
        `column-major, on ${title}`,
    ),
    ignore: XLA_SKIP !== undefined,
    fn: () => runXlaCase(host!, { script }).then(() => {}),
  });
}
