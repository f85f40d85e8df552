// SPDX-License-Identifier: Apache-2.0
// The busy dialog both import dialogs show while a kiln-import child reads a model.
#pragma once

#include <QProgressDialog>
#include <QString>
#include <QWidget>

#include <functional>

namespace kiln::ui {

// Reading a model has no steps to count: the dialog shows a busy bar, opens at once, stays until
// its owner closes it and blocks its parent window; Cancel (labelled `cancelText`) calls `cancel`.
inline QProgressDialog* openBusyDialog(QWidget* parent, const QString& objectName, const QString& title,
                                       const QString& cancelText, std::function<void()> cancel) {
    auto* progress = new QProgressDialog(parent);
    progress->setObjectName(objectName);
    progress->setWindowTitle(title);
    progress->setRange(0, 0);
    progress->setMinimumDuration(0);
    progress->setAutoClose(false);
    progress->setAutoReset(false);
    progress->setWindowModality(Qt::WindowModal);
    progress->setCancelButtonText(cancelText);
    QObject::connect(progress, &QProgressDialog::canceled, parent, std::move(cancel));
    return progress;
}

}  // namespace kiln::ui
