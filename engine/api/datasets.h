// SPDX-License-Identifier: Apache-2.0
// The data workspace's view of the engine: the dataset index (a folder or table scanned once, then
// browsed, filtered and split), the sources a project's data section opens, the pipeline the
// studio measures, the transforms it previews, and the readers of CSV tables and TFRecord files
// that the import dialog inspects. The types are engine/data's; front ends reach them through this
// header.
#pragma once

#include "engine/data/csv_table.h"
#include "engine/data/dataset_index.h"
#include "engine/data/example.h"
#include "engine/data/pipeline.h"
#include "engine/data/sample.h"
#include "engine/data/sources.h"
#include "engine/data/tfrecord.h"
#include "engine/data/transforms.h"
