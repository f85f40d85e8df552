// SPDX-License-Identifier: Apache-2.0
// "Before you train": the device the run will use (with what the machine reports about it), the
// predicted peak memory against the device's free memory with a one-click smaller batch when it
// does not fit, and, on request, the time an epoch will take from a few timed real steps. All of
// it is computed off the GUI thread; a newer project supersedes an older request.
#pragma once

#include <QFutureWatcher>
#include <QTimer>
#include <QWidget>

#include <atomic>
#include <memory>

#include "engine/api/training_preflight.h"
#include "engine/io/project.h"

class QLabel;
class QPushButton;

namespace kiln::ui::training {

class PreflightPanel : public QWidget {
    Q_OBJECT
public:
    static constexpr int kCalibrationSteps = 12;

    explicit PreflightPanel(QWidget* parent = nullptr);
    ~PreflightPanel() override;

    // The project as it would be trained; the memory check follows shortly (debounced).
    void setProject(const engine::io::Project& project, const QString& path);

    // The last finished check (memory, and timing when one was measured).
    bool hasReport() const { return m_hasReport; }
    const engine::api::PreflightReport& report() const { return m_report; }
    QString errorText() const { return m_errorText; }
    bool busy() const { return m_watcher.isRunning(); }

public slots:
    void checkNow();        // the memory check now
    void measureTime();     // memory and a few timed steps

signals:
    // "Use batch N": the project's batch size should become `batch`.
    void batchSizeRequested(qint64 batch);
    void checked();  // after each finished check (also failed ones)

protected:
    void changeEvent(QEvent* event) override;

private:
    struct Outcome {
        bool ok = false;
        engine::api::PreflightReport report;
        QString error;
        quint64 generation = 0;
    };
    void start(int calibrationSteps);
    void show(const Outcome& outcome);
    void retranslate();
    QString deviceText(const engine::api::PreflightReport& r) const;

    engine::io::Project m_project;
    QString m_path;
    bool m_hasProject = false;
    quint64 m_generation = 0;
    bool m_rerun = false;
    int m_rerunSteps = 0;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    QFutureWatcher<Outcome> m_watcher;
    QTimer m_debounce;
    engine::api::PreflightReport m_report;
    bool m_hasReport = false;
    QString m_errorText;

    QLabel* m_title = nullptr;
    QLabel* m_device = nullptr;
    QLabel* m_memory = nullptr;
    QLabel* m_warning = nullptr;
    QPushButton* m_useBatch = nullptr;
    QLabel* m_time = nullptr;
    QPushButton* m_measure = nullptr;
};

}  // namespace kiln::ui::training
