/* Runs a fuzz target's function on files, without libFuzzer: how ctest
 * replays the corpus (the seeds and every input a fuzzer once failed on) in
 * every build, sanitized or not. Arguments: files or directories (their
 * files, in name order). A finding aborts, failing the test. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"

static size_t replayed;

static void replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(2);
  }
  uint8_t *data = NULL;
  size_t size = 0, cap = 0;
  for (;;) {
    if (size == cap) {
      cap = cap ? 2 * cap : 4096;
      data = realloc(data, cap);
      if (!data)
        exit(2);
    }
    const size_t n = fread(data + size, 1, cap - size, f);
    if (n == 0)
      break;
    size += n;
  }
  fclose(f);
  /* An exact-size copy, so ASan catches a read one past the end. */
  uint8_t *exact = malloc(size ? size : 1);
  if (!exact)
    exit(2);
  memcpy(exact, data, size);
  free(data);
  LLVMFuzzerTestOneInput(exact, size);
  free(exact);
  replayed++;
}

static int by_name(const struct dirent **a, const struct dirent **b) {
  return strcmp((*a)->d_name, (*b)->d_name);
}

static void replay_path(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) {
    perror(path);
    exit(2);
  }
  if (!S_ISDIR(st.st_mode)) {
    replay_file(path);
    return;
  }
  struct dirent **names;
  const int n = scandir(path, &names, NULL, by_name);
  if (n < 0) {
    perror(path);
    exit(2);
  }
  for (int i = 0; i < n; i++) {
    if (names[i]->d_name[0] != '.') {
      char *full = malloc(strlen(path) + strlen(names[i]->d_name) + 2);
      if (!full)
        exit(2);
      sprintf(full, "%s/%s", path, names[i]->d_name);
      replay_file(full);
      free(full);
    }
    free(names[i]);
  }
  free(names);
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    replay_path(argv[i]);
  printf("replayed %zu inputs\n", replayed);
  if (replayed == 0) {
    fprintf(stderr, "no inputs\n");
    return 1;
  }
  return 0;
}
