/*
 * A stand-in for NVRTC, for testing the bindings' marshalling on machines
 * without it: "compiling" checks the options and the source and returns a
 * text that echoes the program name, the options and the source, so a test
 * can see exactly what reached the library. A source containing "#error"
 * fails with a compile log, as NVRTC does. With a real architecture
 * (`-arch=sm_XY`) there is a "CUBIN" too: the ELF magic, then that text.
 *
 * Built with -DSTANDIN_NEEDS_BUILTINS, compiling opens
 * libnvrtc-builtins.so.12.4 by name first, as NVRTC does (the loader's
 * search path and the libraries already loaded, not the folder of this
 * library), and fails like NVRTC when it cannot.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvrtcResult;
enum { SUCCESS = 0, OUT_OF_MEMORY = 1, INVALID_INPUT = 3, INVALID_PROGRAM = 4,
       INVALID_OPTION = 5, COMPILATION = 6, BUILTIN_OPERATION_FAILURE = 7 };

struct program {
  char *name;
  char *source;
  char *output;
  int real_arch; /* compiled with -arch=sm_XY: a CUBIN exists */
  char *log;
};

static char *dup_str(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

nvrtcResult nvrtcVersion(int *major, int *minor) {
  *major = 12;
  *minor = 4;
  return SUCCESS;
}

const char *nvrtcGetErrorString(nvrtcResult r) {
  switch (r) {
    case SUCCESS: return "NVRTC_SUCCESS";
    case OUT_OF_MEMORY: return "NVRTC_ERROR_OUT_OF_MEMORY";
    case INVALID_INPUT: return "NVRTC_ERROR_INVALID_INPUT";
    case INVALID_PROGRAM: return "NVRTC_ERROR_INVALID_PROGRAM";
    case INVALID_OPTION: return "NVRTC_ERROR_INVALID_OPTION";
    case COMPILATION: return "NVRTC_ERROR_COMPILATION";
    case BUILTIN_OPERATION_FAILURE: return "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE";
    default: return "NVRTC_ERROR unknown";
  }
}

nvrtcResult nvrtcCreateProgram(struct program **out, const char *src, const char *name, int n,
                               const char *const *headers, const char *const *names) {
  (void)headers;
  (void)names;
  if (!out || !src || n != 0) return INVALID_INPUT;
  struct program *p = calloc(1, sizeof *p);
  if (!p) return OUT_OF_MEMORY;
  p->name = dup_str(name ? name : "default_program");
  p->source = dup_str(src);
  *out = p;
  return SUCCESS;
}

nvrtcResult nvrtcCompileProgram(struct program *p, int n, const char *const *options) {
  if (!p) return INVALID_PROGRAM;
  size_t len = strlen(p->name) + strlen(p->source) + 64;
  for (int i = 0; i < n; i++) {
    if (options[i][0] != '-') return INVALID_OPTION;
    len += strlen(options[i]) + 1;
  }
#ifdef STANDIN_NEEDS_BUILTINS
  void *builtins = dlopen("libnvrtc-builtins.so.12.4", RTLD_NOW);
  if (!builtins) {
    static const char msg[] =
        "nvrtc: error: failed to open libnvrtc-builtins.so.12.4.\n"
        "  Make sure that libnvrtc-builtins.so.12.4 is installed correctly.\n";
    p->log = dup_str(msg);
    return BUILTIN_OPERATION_FAILURE;
  }
  dlclose(builtins);
#endif
  if (strstr(p->source, "#error")) {
    p->log = malloc(strlen(p->name) + 64);
    if (!p->log) return OUT_OF_MEMORY;
    sprintf(p->log, "%s(1): error: #error directive\n\n1 error detected\n", p->name);
    return COMPILATION;
  }
  p->output = malloc(len);
  if (!p->output) return OUT_OF_MEMORY;
  strcpy(p->output, "// program ");
  strcat(p->output, p->name);
  strcat(p->output, "\n// options");
  for (int i = 0; i < n; i++) {
    strcat(p->output, " ");
    strcat(p->output, options[i]);
    if (strncmp(options[i], "-arch=sm_", 9) == 0) p->real_arch = 1;
  }
  strcat(p->output, "\n");
  strcat(p->output, p->source);
  return SUCCESS;
}

nvrtcResult nvrtcGetPTXSize(struct program *p, size_t *n) {
  if (!p || !p->output) return INVALID_PROGRAM;
  *n = strlen(p->output) + 1;
  return SUCCESS;
}

nvrtcResult nvrtcGetPTX(struct program *p, char *out) {
  if (!p || !p->output) return INVALID_PROGRAM;
  strcpy(out, p->output);
  return SUCCESS;
}

nvrtcResult nvrtcGetCUBINSize(struct program *p, size_t *n) {
  if (!p || !p->output) return INVALID_PROGRAM;
  *n = p->real_arch ? 4 + strlen(p->output) : 0; /* 0 for a virtual architecture, as NVRTC */
  return SUCCESS;
}

nvrtcResult nvrtcGetCUBIN(struct program *p, char *out) {
  if (!p || !p->output) return INVALID_PROGRAM;
  if (!p->real_arch) return INVALID_INPUT;
  memcpy(out, "\x7f" "ELF", 4);
  memcpy(out + 4, p->output, strlen(p->output));
  return SUCCESS;
}

nvrtcResult nvrtcGetProgramLogSize(struct program *p, size_t *n) {
  if (!p) return INVALID_PROGRAM;
  *n = p->log ? strlen(p->log) + 1 : 1;
  return SUCCESS;
}

nvrtcResult nvrtcGetProgramLog(struct program *p, char *out) {
  if (!p) return INVALID_PROGRAM;
  strcpy(out, p->log ? p->log : "");
  return SUCCESS;
}

static int live_programs_destroyed;
int standin_nvrtc_destroyed(void) { return live_programs_destroyed; }

nvrtcResult nvrtcDestroyProgram(struct program **pp) {
  if (!pp || !*pp) return INVALID_PROGRAM;
  struct program *p = *pp;
  free(p->name);
  free(p->source);
  free(p->output);
  free(p->log);
  free(p);
  *pp = NULL;
  live_programs_destroyed++;
  return SUCCESS;
}
