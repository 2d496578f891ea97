/* Helpers shared by the unit tests. */
#ifndef DMLC_TESTS_TESTUTIL_H
#define DMLC_TESTS_TESTUTIL_H

#include <check.h>
#include <stdint.h>

#include "dmlc/dmlc.h"

/* Runs every suite and returns the process exit code. */
int dmlc_test_run_suites(Suite **suites, int count);
/* Reads a whole file into a malloc'ed, NUL-terminated buffer; NULL on error. */
char *dmlc_test_read_file(const char *path, size_t *length);

/* The device under test, from DMLC_TEST_DEVICE (reference|cpu|vulkan;
 * unset or empty: reference); DMLC_DEVICE_DEFAULT for a name it does not know
 * (callers reject it). */
dmlc_device dmlc_test_device(void);

/* A fixed-size text being built up, e.g. IR for generated cases. */
typedef struct dmlc_test_text {
  char buf[16384];
  size_t len;
} dmlc_test_text;
/* Appends formatted text; fails the test when it does not fit. */
void dmlc_test_text_add(dmlc_test_text *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
