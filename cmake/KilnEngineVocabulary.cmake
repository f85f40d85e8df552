# SPDX-License-Identifier: Apache-2.0
# The engine headers outside engine/api that the studio and the api headers may name: value types
# and pure functions that describe the document the studio edits (docs/architecture.md, "The UI's
# boundary"). Included by cmake/CheckUiBoundary.cmake and cmake/CheckApiHeaders.cmake. Keep this
# list short; anything that does work belongs behind an engine/api call.
set(KILN_UI_VOCABULARY
  engine/core/error.h         # Error and Result, which every api call returns
  engine/core/json_checked.h  # reading user JSON with errors that name the file and line
  engine/graph/graph.h        # the graph the editor edits
  engine/graph/attr.h         # node attribute values
  engine/io/project.h         # the project document (graph, data, training sections)
  engine/io/layers.h          # composite layer definitions the palette offers
  engine/ops/op_table.h       # the op table: palette, inspector, node cards
  engine/ops/plugin_ops.h     # the op table's plugin rows
  engine/ops/model.h          # shape inference over a graph, shown live by the editor
  engine/ops/summary.h        # per-node parameters, MACs and memory from that analysis
)

# engine/core basics an api header may use in its declarations besides the vocabulary: plain
# values (shapes, devices) and the thread pool a caller may lend to a call.
set(KILN_API_CORE_BASICS
  engine/core/shape.h
  engine/core/device.h
  engine/core/thread_pool.h
)
