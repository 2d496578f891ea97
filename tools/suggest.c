/* The closest spelling: optimal string alignment distance (Levenshtein plus
 * adjacent transpositions, so "devcie" is one edit from "device"). */
#include "tools/suggest.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_WORD = 64 };

static size_t min3(size_t a, size_t b, size_t c) {
  const size_t m = a < b ? a : b;
  return m < c ? m : c;
}

static size_t distance(const char *a, size_t n, const char *b, size_t m) {
  size_t d[MAX_WORD + 1][MAX_WORD + 1];
  for (size_t i = 0; i <= n; i++)
    d[i][0] = i;
  for (size_t j = 0; j <= m; j++)
    d[0][j] = j;
  for (size_t i = 1; i <= n; i++)
    for (size_t j = 1; j <= m; j++) {
      const int same = tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 1]);
      d[i][j] = min3(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + !same);
      if (i > 1 && j > 1 && tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 2]) &&
          tolower((unsigned char)a[i - 2]) == tolower((unsigned char)b[j - 1]) &&
          d[i - 2][j - 2] + 1 < d[i][j])
        d[i][j] = d[i - 2][j - 2] + 1;
    }
  return d[n][m];
}

const char *suggest_closest(const char *word, size_t len, const char *const *candidates) {
  if (len == 0 || len > MAX_WORD)
    return NULL;
  const size_t limit = len / 3 > 1 ? len / 3 : 1;
  const char *best = NULL;
  size_t best_d = limit + 1;
  for (size_t i = 0; candidates[i]; i++) {
    const size_t m = strlen(candidates[i]);
    if (m > MAX_WORD)
      continue;
    const size_t dist = distance(word, len, candidates[i], m);
    if (dist < best_d) {
      best_d = dist;
      best = candidates[i];
    }
  }
  return best;
}
