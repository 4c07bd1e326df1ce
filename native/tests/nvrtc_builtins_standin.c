/*
 * A stand-in for libnvrtc-builtins, built with the soname
 * libnvrtc-builtins.so.12.4: what the stand-in NVRTC built with
 * -DSTANDIN_NEEDS_BUILTINS opens by name before compiling.
 */
int standin_nvrtc_builtins(void) { return 1; }
