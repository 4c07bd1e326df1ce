/**
 * Child of tests/xla_errors_test.ts: hosts jax and sends itself SIGINT, as a
 * user's Ctrl-C, while `Xla.open` imports jax (`import`: as soon as Python's
 * SIGINT handler is installed; where the signal lands decides whether Python
 * turns it into KeyboardInterrupt), or raises KeyboardInterrupt in a Python
 * statement as that handler does (`raise`: deterministic), or gets a real
 * SIGINT while Python runs on the JS thread (`sync`: Xla.runPythonSync). The script catches every error and prints "ran on" after it:
 * the process must end with 130 instead. Runs with -A (it reads
 * /proc/self/status).
 *
 * @module
 */
import { Xla } from "../src/xla/mod.ts";

const mode = Deno.args[0];

/** True once something in the process catches SIGINT (Python's handler, installed by the import). */
function sigintCaught(): boolean {
  const m = /SigCgt:\s+([0-9a-f]+)/.exec(Deno.readTextFileSync("/proc/self/status"));
  return m !== null && ((BigInt("0x" + m[1]) >> 1n) & 1n) === 1n;
}

try {
  if (mode === "import") {
    let sent = false;
    const poll = setInterval(() => {
      if (!sent && sigintCaught()) {
        sent = true;
        Deno.kill(Deno.pid, "SIGINT");
      }
    }, 2);
    let xla: Xla;
    try {
      xla = await Xla.open();
    } finally {
      clearInterval(poll);
    }
    console.log(`opened (SIGINT sent: ${sent})`);
    if (!sent) Deno.kill(Deno.pid, "SIGINT");
    await new Promise((r) => setTimeout(r, 2000));
    await xla.close();
  } else if (mode === "sync") {
    await using xla = await Xla.open();
    // A real SIGINT while Python runs on the JS thread (Xla.runPythonSync).
    xla.runPythonSync(
      "import os, signal, time\nos.kill(os.getpid(), signal.SIGINT)\ntime.sleep(10)\nresult = 1",
    );
  } else {
    await using xla = await Xla.open();
    // What Python's SIGINT handler does to the running code, without the race of a real signal.
    await xla.runPython("raise KeyboardInterrupt");
  }
} catch (e) {
  console.log(`caught ${String(e)}`);
}
console.log("ran on");
