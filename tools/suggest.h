/* "Did you mean ...?": the closest spelling among known names, as clang
 * suggests for an unknown option. */
#ifndef DMLC_TOOLS_SUGGEST_H
#define DMLC_TOOLS_SUGGEST_H

#include <stddef.h>

/* The candidate closest to word (len bytes) by edit distance, adjacent
 * transpositions counting as one edit and case ignored, when it is close
 * enough to be a typo (at most a third of the word's length, at least 1);
 * NULL otherwise. candidates ends with NULL. */
const char *suggest_closest(const char *word, size_t len, const char *const *candidates);

#endif
