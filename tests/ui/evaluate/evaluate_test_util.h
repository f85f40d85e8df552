// SPDX-License-Identifier: Apache-2.0
// Shared by the Evaluate view's tests: training a small project in the test, evaluating with a
// click on the view's button, clicking a table cell.
#pragma once

#include <QPushButton>
#include <QSignalSpy>
#include <QString>
#include <QTableView>
#include <QTest>

#include "engine/api/training_job.h"
#include "engine/io/project.h"
#include "ui/evaluate/evaluate_view.h"

namespace kiln::test {

// Trains `project` (saved at `projectPath`) into `runDir` without recording it in run history;
// returns the run folder, or "" with a warning naming what went wrong.
inline QString trainRun(const engine::io::Project& project, const QString& projectPath, const QString& runDir,
                        const char* runName) {
    engine::api::TrainingOptions options;
    options.runDir = runDir.toStdString();
    options.runName = runName;
    options.recordRun = false;
    auto job = engine::api::TrainingJob::prepare(project, projectPath.toStdString(), options);
    if (!job.ok()) {
        qWarning("training cannot start: %s", job.error().toString().c_str());
        return {};
    }
    auto outcome = (*job)->run({});
    if (!outcome.ok()) qWarning("training failed: %s", outcome.error().toString().c_str());
    return outcome.ok() ? QString::fromStdString(outcome->runDir) : QString();
}

// Clicks the view's Evaluate button and waits (up to 3 minutes) for the evaluation to end.
// True when it succeeded; `error` receives the view's message either way.
inline bool evaluateWithClick(ui::evaluate::EvaluateView& view, QString* error = nullptr) {
    QSignalSpy finished(&view, &ui::evaluate::EvaluateView::finished);
    QTest::mouseClick(view.findChild<QPushButton*>(QStringLiteral("evalRun")), Qt::LeftButton);
    if (!QTest::qWaitFor([&] { return finished.count() == 1; }, 180000)) return false;
    const bool ok = finished.first().at(0).toBool();
    const QString message = finished.first().at(1).toString();
    if (error != nullptr) *error = message;
    else if (!ok) qWarning("evaluation failed: %s", qPrintable(message));
    return ok;
}

inline void clickCell(QTableView* view, int row, int column) {
    const QModelIndex at = view->model()->index(row, column);
    view->scrollTo(at);
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, view->visualRect(at).center());
}

}  // namespace kiln::test
