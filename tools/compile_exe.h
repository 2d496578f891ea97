/* dmlc compile --emit=exe: the C source of a program around one graph
 * compiled ahead of time (docs/aot.md). dmlc compile writes it beside the
 * graph's object and header and links them with the C compiler. */
#ifndef DMLC_TOOLS_COMPILE_EXE_H
#define DMLC_TOOLS_COMPILE_EXE_H

#include <stddef.h>

/* The program is two C files. The driver's source (malloc'ed; NULL when
 * memory runs out) is the same for every graph: it reads its inputs from
 * .npy files (or ONNX TensorProto .pb files, with a protobuf reader of its
 * own), checks their data types and shapes, lays them out as the graph
 * wants, runs NAME_run (or NAME_run_parallel on its own threads, or
 * NAME_run_workspace) and writes the outputs as .npy (or .pb) files: see
 * the program's --help. It finds the graph in the table (the global
 * dmlc_exe_graph), which the table's source defines from the graph's
 * header (what dmlc_graph_emit writes for "header", header_text), included
 * as "header_file". The build compiles the driver once, for the host
 * (tools/exe_driver_gen.c); dmlc compile then compiles only the table.
 * NULL with a message in err when the header is not one dmlc wrote, or
 * when memory runs out. */
char *compile_exe_driver_source(void);
char *compile_exe_table_source(const char *header_text, const char *header_file, char *err,
                               size_t err_size);

#endif
