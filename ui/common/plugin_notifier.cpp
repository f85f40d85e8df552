// SPDX-License-Identifier: Apache-2.0
// PluginNotifier: a listener of the engine's plugin registry turned into a Qt signal.
#include "ui/common/plugin_notifier.h"

#include <QThread>

#include "engine/api/plugins.h"

namespace kiln::ui {

PluginNotifier& PluginNotifier::instance() {
    static PluginNotifier notifier;
    return notifier;
}

PluginNotifier::PluginNotifier() {
    m_listener = engine::api::addPluginListener([this] {
        if (QThread::currentThread() == thread())
            emit pluginsChanged();
        else
            QMetaObject::invokeMethod(this, &PluginNotifier::pluginsChanged, Qt::QueuedConnection);
    });
}

PluginNotifier::~PluginNotifier() {
    engine::api::removePluginListener(m_listener);
}

}  // namespace kiln::ui
