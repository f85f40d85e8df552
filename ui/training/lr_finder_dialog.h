// SPDX-License-Identifier: Apache-2.0
// "Find learning rate…": runs the learning-rate range test (engine/api/learning_rate_finder.h,
// the code of kiln-train --find-lr) on the project off the GUI thread, plots the loss against the
// learning rate on a logarithmic axis as the points arrive, marks the suggested rate and offers it.
#pragma once

#include <QDialog>

#include <atomic>
#include <memory>

#include "engine/io/project.h"
#include "engine/api/learning_rate_finder.h"

class QCustomPlot;
class QCPGraph;
class QCPItemStraightLine;
class QLabel;
class QPushButton;
class QSpinBox;
class QTimer;

namespace kiln::ui::training {

class LrFinderDialog : public QDialog {
    Q_OBJECT
public:
    // `project` carries the training configuration to test (the form's, possibly unsaved).
    LrFinderDialog(const engine::io::Project& project, const QString& projectPath, QWidget* parent = nullptr);
    ~LrFinderDialog() override;

    bool running() const { return m_running; }
    const engine::api::LrFinderResult& result() const { return m_result; }
    QCustomPlot* plot() const { return m_plot; }

public slots:
    void start();

signals:
    // The user took the suggestion.
    void learningRateChosen(double lr);
    // After a test ends; `message` is the error.
    void finished(bool ok, const QString& message);

protected:
    void changeEvent(QEvent* event) override;

private:
    void addPoint(const engine::api::LrFinderPoint& p);
    void retranslate();

    engine::io::Project m_project;
    QString m_projectPath;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    engine::api::LrFinderResult m_result;
    bool m_running = false;
    QCustomPlot* m_plot = nullptr;
    QCPGraph* m_loss = nullptr;
    QCPGraph* m_smoothed = nullptr;
    QCPItemStraightLine* m_marker = nullptr;
    QTimer* m_replot = nullptr;
    QLabel* m_stepsLabel = nullptr;
    QSpinBox* m_steps = nullptr;
    QPushButton* m_run = nullptr;
    QPushButton* m_use = nullptr;
    QLabel* m_status = nullptr;
};

}  // namespace kiln::ui::training
