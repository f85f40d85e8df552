// SPDX-License-Identifier: Apache-2.0
// A project's run history: the runs recorded in its run store (status, configuration, metrics,
// artifacts), listed, renamed and deleted by the studio. The store is engine/store's RunStore;
// front ends reach it through this header. runStorePath() (engine/api/training_job.h) names a
// project's store.
#pragma once

#include "engine/store/run_store.h"
