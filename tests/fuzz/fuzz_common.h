/* What the fuzz targets of tests/fuzz share: a reader of the fuzzer's bytes,
 * the check that fails a run, and reference-versus-CPU execution of a graph.
 * docs/reliability.md says what each target covers. */
#ifndef DMLC_TESTS_FUZZ_COMMON_H
#define DMLC_TESTS_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "dmlc/dmlc.h"

/* libFuzzer's entry point, which every target defines. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A finding: prints the message and aborts, so libFuzzer (or the replay
 * driver under ctest) reports the input. */
#define FUZZ_CHECK(cond, ...)                                                                      \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      fuzz_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);                                           \
  } while (0)
_Noreturn void fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Takes bytes from the front of the input; past the end, zeros. */
typedef struct fuzz_reader {
  const uint8_t *data;
  size_t size, pos;
} fuzz_reader;
uint8_t fuzz_u8(fuzz_reader *r);
uint32_t fuzz_u32(fuzz_reader *r);
uint64_t fuzz_u64(fuzz_reader *r);

/* A context kept across inputs (so the CPU device's JIT is made once), made
 * anew every so many inputs so its kernel cache stays small. */
dmlc_context *fuzz_context(void);

/* A status a public call may return for bad input: anything but INTERNAL,
 * with a message. */
void fuzz_check_status(dmlc_context *ctx, dmlc_status status, const char *call);

/* Compiles graph for the reference device and for the CPU, and when its
 * buffers are small (at most max_bytes in all, and at most max_bytes
 * logical elements in its inputs and outputs) executes both on the same
 * inputs (seed picks them) and requires every output byte to be equal,
 * padding and strided gaps included. Returns whether it executed. */
int fuzz_compare_devices(dmlc_context *ctx, dmlc_graph *graph, uint64_t seed, uint64_t max_bytes);

#endif
