/* The reference evaluator: a slow, obviously correct interpreter of any
 * verified IR graph over strided host tensors. The oracle of every backend. */
#ifndef DMLC_RUNTIME_REFERENCE_H
#define DMLC_RUNTIME_REFERENCE_H

#include "ir/ir.h"

/* Evaluates g. inputs[i] / outputs[i] are bound to g->inputs[i] /
 * g->outputs[i], laid out as their dmlc_layout; the caller has checked the
 * buffers are large enough. Intermediates are dense row-major. */
dmlc_status dmlc_reference_execute(const dmlc_ir_graph *g, const dmlc_buffer *inputs,
                                   const dmlc_buffer *outputs, dmlc_diag *diag);

#endif
