/* See array.h. */
#include "ir/array.h"

#include <stdlib.h>
#include <string.h>

bool dmlc_array_reserve(void **items, uint32_t *cap, uint32_t need, size_t item_size,
                        uint32_t min_cap) {
  if (need <= *cap)
    return true;
  uint64_t grown = *cap ? *cap : (min_cap ? min_cap : 1);
  while (grown < need)
    grown *= 2;
  if (grown > UINT32_MAX)
    grown = UINT32_MAX;
  if (grown < need || grown > SIZE_MAX / item_size)
    return false;
  void *p = realloc(*items, (size_t)grown * item_size);
  if (!p)
    return false;
  memset((char *)p + (size_t)*cap * item_size, 0, (size_t)(grown - *cap) * item_size);
  *items = p;
  *cap = (uint32_t)grown;
  return true;
}
