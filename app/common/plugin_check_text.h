// SPDX-License-Identifier: Apache-2.0
// The words for a plugin check's result, in the user's language, composed from its finding and
// parameters (engine/api/plugins.h): Help > Plugins > Check plugin and kiln-train --check-plugins
// say the same.
#pragma once

#include <QCoreApplication>
#include <QString>

#include "engine/api/plugins.h"

namespace kiln::app {

class PluginCheckText {
    Q_DECLARE_TR_FUNCTIONS(PluginCheckText)

public:
    // What the check compared, or what went wrong ("192 values agree with the reference").
    static QString detail(const engine::api::PluginCheckResult& c);
    // The case: the plugin's own name for it, or for a loss its shapes
    // ("q=0.9 (predictions [4,3], targets [4,3])").
    static QString caseText(const engine::api::PluginCheckResult& c);
};

}  // namespace kiln::app
