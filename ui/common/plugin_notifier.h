// SPDX-License-Identifier: Apache-2.0
// The studio's view of plugin loading: one signal, emitted on the GUI thread whenever the
// engine's plugin registry gains a plugin (or records a failed load), so that the palette, the
// inspector, the canvas and the training form offer a plugin's operations, losses and metrics as
// soon as Help > Plugins > Load Plugin… loads it, without a restart.
#pragma once

#include <QObject>

namespace kiln::ui {

class PluginNotifier : public QObject {
    Q_OBJECT
public:
    // The one instance, living on the thread that first asks for it (the GUI thread).
    static PluginNotifier& instance();
    ~PluginNotifier() override;

signals:
    // The registry's plugins or failures changed. Loads on the GUI thread emit it before
    // load() returns; loads on another thread emit it on the GUI thread's next turn.
    void pluginsChanged();

private:
    PluginNotifier();
    int m_listener = 0;
};

}  // namespace kiln::ui
