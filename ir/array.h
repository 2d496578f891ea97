/* Growing an array in place: the one growth rule every dynamic array in
 * dmlc uses (doubling, overflow-checked). */
#ifndef DMLC_IR_ARRAY_H
#define DMLC_IR_ARRAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Makes *items (of item_size bytes each, *cap allocated) hold at least need
 * items, doubling from min_cap; new items are zeroed. False (and *items,
 * *cap unchanged) when out of memory or the size would overflow. */
bool dmlc_array_reserve(void **items, uint32_t *cap, uint32_t need, size_t item_size,
                        uint32_t min_cap);

/* dmlc_array_reserve for a typed pointer: DMLC_ARRAY_RESERVE(&g->nodes,
 * &g->cap_nodes, g->num_nodes + 1, 16). */
#define DMLC_ARRAY_RESERVE(items_ptr, cap_ptr, need, min_cap)                                      \
  dmlc_array_reserve((void **)(items_ptr), (cap_ptr), (need), sizeof **(items_ptr), (min_cap))

#endif
