/**
 * Cost of the complete (inspection) readers on the fixture frame of
 * native/tests/abi_fixture.c: 8 buffer args, 2 rets, 25 attributes with a
 * 2-level dictionary. Run: `deno bench --allow-ffi --allow-read --allow-write
 * --allow-run --allow-env bench/abi_readers_bench.ts`.
 */
import { readCallFrame, readMetadataExtension } from "../src/abi/readers.ts";
import { fixture } from "../tests/_abi_fixture.ts";

const fx = fixture();
const frame = fx.abi_fixture_frame();
const ext = fx.abi_fixture_metadata_extension(2);

Deno.bench("readCallFrame, fixture frame (8 args, 2 rets, 25 attrs)", () => {
  readCallFrame(frame);
});

Deno.bench("readMetadataExtension", () => {
  readMetadataExtension(ext);
});
