/* Helpers shared by the unit tests. */
#ifndef DMLC_TESTS_TESTUTIL_H
#define DMLC_TESTS_TESTUTIL_H

#include <check.h>
#include <stdbool.h>
#include <stdint.h>

#include "dmlc/dmlc.h"

/* Runs every suite and returns the process exit code. */
int dmlc_test_run_suites(Suite **suites, int count);
/* For a suite whose cases each open Vulkan in their own forked process:
 * the loader would load and relocate the drivers (lavapipe brings LLVM 15)
 * and the validation layer, and the driver initialize itself, in every
 * case (0.1 s a case plain, more under ASan). Called in the suite's process
 * before it forks, this creates an instance, lists its devices, keeps a
 * reference to every shared object that loaded and destroys the instance:
 * the cases inherit those objects loaded and relocated, and each still
 * creates its own instance and device. True when it did (what the driver
 * left then belongs to no case: the caller's process skips its leak check
 * at exit). DMLC_TEST_PIN_VULKAN=0 leaves it out (scripts/gpu_check.sh: a
 * GPU's driver may keep threads or state past the instance, which a fork
 * would split); nothing is reported, a case that needs Vulkan says so when
 * it opens the device. unit.test_device.split under ASan on a Zen 5: 128 s
 * -> 108 s. Only for a process whose forked cases all open Vulkan: the
 * loaded objects make every later fork dearer (unit.test_onnx, whose cases
 * mostly do not, took 57 s with it beside one other test, 20 s without it
 * alone). */
bool dmlc_test_pin_vulkan(void);
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
