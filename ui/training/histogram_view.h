// SPDX-License-Identifier: Apache-2.0
// The training view's Histograms tab: for one parameter of the model, its weight and gradient
// distributions over the epochs as two heat maps (epoch across, value up, each epoch's column
// scaled to its own highest density). Fed live from the epoch events of a run, or loaded from a
// finished run's histograms.jsonl off the GUI thread.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include <QString>
#include <QWidget>

#include "engine/api/histogram_log.h"

class QComboBox;
class QCustomPlot;
class QCPColorMap;
class QLabel;
class QTimer;

namespace kiln::ui::training {

class HistogramView : public QWidget {
    Q_OBJECT
public:
    explicit HistogramView(QWidget* parent = nullptr);
    ~HistogramView() override;

    // Forgets what is shown; `source` names what comes next ("Run 4, live").
    void clear(const QString& source = {});
    // One epoch's histograms (live training).
    void addEpoch(int epoch, std::vector<engine::api::ParamHistogram> params);
    // Reads <runDir>/histograms.jsonl on a worker thread and shows it; a later call or clear()
    // wins over a load still under way. `loaded` follows either way.
    void loadRun(const QString& runDir, const QString& source);

    QStringList parameters() const;
    QString currentParameter() const;
    void setCurrentParameter(const QString& name);
    QList<int> epochs() const;
    QString sourceText() const;
    QString messageText() const;  // why nothing is shown ("" when the maps show data)

    // The heat map of the current parameter as drawn: `columns` epochs (first to last recorded)
    // by `rows` value cells from `low` to `high`; cell (c, r) at values[c * rows + r] in [0, 1].
    struct Grid {
        int firstEpoch = 0;
        int columns = 0;
        int rows = 0;
        double low = 0, high = 0;
        std::vector<double> values;
    };
    Grid grid(bool gradients) const;

    static constexpr int kRows = 64;

signals:
    // A run's histograms were read (ok) or could not be (the message says why).
    void loaded(bool ok);

protected:
    void changeEvent(QEvent* event) override;
    void showEvent(QShowEvent* event) override;

private:
    void retranslate();
    void refreshParameters();
    void scheduleReplot();
    void replot();
    void showMessage(const QString& text);

    QLabel* m_source = nullptr;
    QLabel* m_paramLabel = nullptr;
    QComboBox* m_param = nullptr;
    QLabel* m_message = nullptr;
    QCustomPlot* m_weightsPlot = nullptr;
    QCustomPlot* m_gradientsPlot = nullptr;
    QCPColorMap* m_weightsMap = nullptr;
    QCPColorMap* m_gradientsMap = nullptr;
    QTimer* m_replotTimer = nullptr;
    QString m_sourceText;
    QString m_loadError;
    std::map<int, std::vector<engine::api::ParamHistogram>> m_epochs;  // by epoch
    uint64_t m_generation = 0;
    bool m_replotPending = false;  // data changed while hidden
};

}  // namespace kiln::ui::training
