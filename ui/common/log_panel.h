// SPDX-License-Identifier: Apache-2.0
// The log panel: a list model over the MessageLog, a severity filter, copy and clear.
#pragma once

#include <QAbstractListModel>
#include <QPointer>
#include <QSortFilterProxyModel>
#include <QWidget>

#include "ui/common/message_log.h"

class QComboBox;
class QListView;
class QToolButton;

namespace kiln::ui {

// Rows are the log's entries, oldest first. Display: "hh:mm:ss  [Severity]  text".
// New entries are announced to views in batches (once per event-loop turn), so a flood of
// messages costs one insertion per batch, not one per message.
class LogModel : public QAbstractListModel {
    Q_OBJECT

public:
    enum Role { SeverityRole = Qt::UserRole + 1, TextRole, CategoryRole, TimeRole };

    explicit LogModel(MessageLog* log, QObject* parent = nullptr);
    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    // Announces pending entries now (normally done on the next event-loop turn).
    void flush();

private:
    void onEntryAdded(const LogEntry& entry, int dropped);
    void onCleared();
    QPointer<MessageLog> m_log;
    int m_rows = 0;            // rows the views know about
    int m_pendingDropped = 0;  // entries dropped from the log's front since the last flush
    bool m_flushQueued = false;
};

// Keeps rows at or above a minimum severity.
class SeverityFilterModel : public QSortFilterProxyModel {
    Q_OBJECT

public:
    using QSortFilterProxyModel::QSortFilterProxyModel;
    void setMinimumSeverity(Severity s);
    Severity minimumSeverity() const { return m_minimum; }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    Severity m_minimum = Severity::Debug;
};

class LogPanel : public QWidget {
    Q_OBJECT

public:
    explicit LogPanel(MessageLog* log, QWidget* parent = nullptr);

    void setMinimumSeverity(Severity s);
    Severity minimumSeverity() const;
    // Selects and scrolls to the newest visible entry whose text contains `text` (for "Details").
    bool revealEntry(const QString& text);
    // The visible (filtered) rows as plain text, one per line; the selection only if `selectedOnly`.
    QString visibleText(bool selectedOnly = false) const;
    int visibleRowCount() const;

public slots:
    void copyToClipboard();  // the selected rows, or every visible row when nothing is selected
    void clear();

protected:
    void changeEvent(QEvent* event) override;

private:
    void retranslateUi();
    QPointer<MessageLog> m_log;
    LogModel* m_model;
    SeverityFilterModel* m_filter;
    QComboBox* m_severityBox;
    QToolButton* m_copyButton;
    QToolButton* m_clearButton;
    QListView* m_view;
    bool m_followTail = true;
};

}  // namespace kiln::ui
