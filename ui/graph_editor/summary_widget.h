// SPDX-License-Identifier: Apache-2.0
// The model summary: one row per node (output shape, parameters, MACs, memory) with totals,
// from the engine's summary of the latest analysis; exportable as text.
#pragma once

#include <QAbstractTableModel>
#include <QWidget>

#include <optional>

#include "engine/ops/summary.h"

class QLabel;
class QTableView;

namespace kiln::ui {

struct GraphAnalysis;

class SummaryModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Name, Op, Output, Params, Frozen, Macs, Memory, ColumnCount };
    explicit SummaryModel(QObject* parent = nullptr);
    void setSummary(const std::optional<engine::ops::ModelSummary>& summary);
    const std::optional<engine::ops::ModelSummary>& summary() const { return m_summary; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

private:
    std::optional<engine::ops::ModelSummary> m_summary;
};

class SummaryWidget : public QWidget {
    Q_OBJECT
public:
    explicit SummaryWidget(QWidget* parent = nullptr);
    void setAnalysis(const GraphAnalysis& analysis);
    SummaryModel* model() const { return m_model; }
    QTableView* view() const { return m_view; }
    QString totalsText() const;
    // Keras-style text of the summary, as kiln-train --summary prints it (empty while the model
    // has an error); the title is the model's name.
    QString summaryText() const;
    bool exportText(const QString& path) const;
    void setTitle(const QString& title) { m_title = title; }
    // Asks for a file name and writes the text (the "Export as Text…" button).
    void exportTextInteractive();

private:
    SummaryModel* m_model = nullptr;
    QTableView* m_view = nullptr;
    QLabel* m_totals = nullptr;
    QString m_title;
};

}  // namespace kiln::ui
