/* A small library with every kind of dynamic symbol, read by tests/elf_test.ts. */
#include <stdio.h>

int elf_global_function(int x) { return x + 1; }

__attribute__((weak)) int elf_weak_function(int x) { return x * 2; }

__attribute__((visibility("hidden"))) int elf_hidden_function(int x) { return x - 1; }

__attribute__((visibility("protected"))) int elf_protected_function(int x) { return x * 3; }

static int elf_static_function(int x) { return x ^ 5; }

int elf_global_variable = 7;

int elf_calls_import(void) {
  puts("hello");
  return elf_static_function(elf_hidden_function(elf_global_variable));
}
