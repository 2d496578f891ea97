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

#endif
