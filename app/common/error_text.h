// SPDX-License-Identifier: Apache-2.0
// Composes the user's words for an engine Error from its code and parameters, in the user's
// language; the engine's English message is the detail.
#pragma once

#include <QCoreApplication>
#include <QString>
#include <QStringList>

#include "engine/core/error.h"
#include "engine/api/training_job.h"

namespace kiln::app {

class ErrorText {
    Q_DECLARE_TR_FUNCTIONS(ErrorText)

public:
    // "file:line: <localized headline>: <engine detail>", plus how to fetch the data sets when
    // the missing file belongs in the data cache.
    static QString describe(const engine::Error& e);
    // The localized headline for the code alone.
    static QString headline(const engine::Error& e);
    // Exit status for kiln-train: 2 for problems in what the user wrote or gave, 1 otherwise.
    static int exitCode(const engine::Error& e);
};

class WeightsText {
    Q_DECLARE_TR_FUNCTIONS(WeightsText)

public:
    // What starting weights loaded (engine::api::WeightsReport), for kiln-train and the
    // studio's log: a summary line of counts, then one line per tensor that did not load.
    static QStringList describe(const engine::api::WeightsReport& r);
};

}  // namespace kiln::app
