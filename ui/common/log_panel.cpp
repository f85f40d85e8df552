// SPDX-License-Identifier: Apache-2.0
// Log panel: model, severity filter and the widget with its small tool bar.
#include "ui/common/log_panel.h"

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QIcon>
#include <QListView>
#include <QScrollBar>
#include <QToolButton>
#include <QVBoxLayout>

#include "ui/common/themed_icon.h"

namespace kiln::ui {

namespace {
QString rowText(const LogEntry& e) {
    return QStringLiteral("%1  [%2]  %3").arg(e.time.toString(QStringLiteral("HH:mm:ss")), severityName(e.severity), e.text);
}

QIcon severityIcon(Severity s) {
    switch (s) {
    case Severity::Error: return themedIcon(QStringLiteral("error"));
    case Severity::Warning: return themedIcon(QStringLiteral("warning"));
    default: return themedIcon(QStringLiteral("info"));
    }
}
}  // namespace

LogModel::LogModel(MessageLog* log, QObject* parent) : QAbstractListModel(parent), m_log(log) {
    if (!log) return;
    m_rows = log->entries().size();
    connect(log, &MessageLog::entryAdded, this, &LogModel::onEntryAdded);
    connect(log, &MessageLog::cleared, this, &LogModel::onCleared);
}

int LogModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : m_rows; }

QVariant LogModel::data(const QModelIndex& index, int role) const {
    if (!m_log || !checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    // Until the next flush, the log's front may hold fewer (dropped) entries than the rows say.
    const int at = index.row() - m_pendingDropped;
    if (at < 0 || at >= m_log->entries().size()) return {};
    const LogEntry& e = m_log->entries().at(at);
    switch (role) {
    case Qt::DisplayRole: return rowText(e);
    case Qt::ToolTipRole: return e.text;
    case Qt::DecorationRole: return severityIcon(e.severity);
    case SeverityRole: return static_cast<int>(e.severity);
    case TextRole: return e.text;
    case CategoryRole: return e.category;
    case TimeRole: return e.time;
    default: return {};
    }
}

void LogModel::onEntryAdded(const LogEntry&, int dropped) {
    m_pendingDropped += dropped;
    if (m_flushQueued) return;
    m_flushQueued = true;
    QMetaObject::invokeMethod(this, &LogModel::flush, Qt::QueuedConnection);
}

void LogModel::flush() {
    m_flushQueued = false;
    if (!m_log) return;
    // Entries dropped before the views ever saw them need no removal.
    int removeCount = std::min(m_pendingDropped, m_rows);
    if (removeCount > 0) {
        beginRemoveRows({}, 0, removeCount - 1);
        m_rows -= removeCount;
        m_pendingDropped -= removeCount;
        endRemoveRows();
    }
    m_pendingDropped = 0;
    const int target = m_log->entries().size();
    if (target > m_rows) {
        beginInsertRows({}, m_rows, target - 1);
        m_rows = target;
        endInsertRows();
    }
}

void LogModel::onCleared() {
    beginResetModel();
    m_rows = 0;
    m_pendingDropped = 0;
    endResetModel();
}

void SeverityFilterModel::setMinimumSeverity(Severity s) {
    if (s == m_minimum) return;
    m_minimum = s;
    invalidateFilter();
}

bool SeverityFilterModel::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    QModelIndex i = sourceModel()->index(sourceRow, 0, sourceParent);
    return i.data(LogModel::SeverityRole).toInt() >= static_cast<int>(m_minimum);
}

LogPanel::LogPanel(MessageLog* log, QWidget* parent)
    : QWidget(parent), m_log(log), m_model(new LogModel(log, this)), m_filter(new SeverityFilterModel(this)) {
    setObjectName(QStringLiteral("logPanel"));
    m_filter->setSourceModel(m_model);

    m_severityBox = new QComboBox(this);
    m_severityBox->setObjectName(QStringLiteral("logSeverity"));
    for (int i = 0; i < 4; ++i) m_severityBox->addItem(QString(), i);
    m_copyButton = new QToolButton(this);
    m_copyButton->setObjectName(QStringLiteral("logCopy"));
    m_copyButton->setIcon(themedIcon(QStringLiteral("copy")));
    m_clearButton = new QToolButton(this);
    m_clearButton->setObjectName(QStringLiteral("logClear"));
    m_clearButton->setIcon(themedIcon(QStringLiteral("clear")));
    m_view = new QListView(this);
    m_view->setObjectName(QStringLiteral("logView"));
    m_view->setModel(m_filter);
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_view->setUniformItemSizes(true);
    m_view->setWordWrap(false);

    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(0, 0, 0, 0);
    bar->addWidget(m_severityBox);
    bar->addStretch(1);
    bar->addWidget(m_copyButton);
    bar->addWidget(m_clearButton);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addLayout(bar);
    layout->addWidget(m_view, 1);

    connect(m_severityBox, &QComboBox::currentIndexChanged, this,
            [this](int i) { m_filter->setMinimumSeverity(static_cast<Severity>(m_severityBox->itemData(i).toInt())); });
    connect(m_copyButton, &QToolButton::clicked, this, &LogPanel::copyToClipboard);
    connect(m_clearButton, &QToolButton::clicked, this, &LogPanel::clear);
    // Follow new entries while the view is scrolled to the bottom.
    connect(m_view->verticalScrollBar(), &QScrollBar::valueChanged, this,
            [this](int v) { m_followTail = v >= m_view->verticalScrollBar()->maximum(); });
    connect(m_filter, &QAbstractItemModel::rowsInserted, this, [this] {
        if (m_followTail) m_view->scrollToBottom();
    });
    m_severityBox->setCurrentIndex(static_cast<int>(Severity::Info));
    retranslateUi();
}

void LogPanel::retranslateUi() {
    setWindowTitle(tr("Log"));
    m_severityBox->setItemText(0, tr("All messages"));
    m_severityBox->setItemText(1, tr("Info and above"));
    m_severityBox->setItemText(2, tr("Warnings and errors"));
    m_severityBox->setItemText(3, tr("Errors only"));
    m_severityBox->setToolTip(tr("Show messages of this severity and above"));
    m_copyButton->setToolTip(tr("Copy the selected messages (all shown messages if none is selected)"));
    m_clearButton->setToolTip(tr("Clear the log"));
}

void LogPanel::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QWidget::changeEvent(event);
}

void LogPanel::setMinimumSeverity(Severity s) { m_severityBox->setCurrentIndex(static_cast<int>(s)); }

Severity LogPanel::minimumSeverity() const { return m_filter->minimumSeverity(); }

int LogPanel::visibleRowCount() const {
    m_model->flush();
    return m_filter->rowCount();
}

bool LogPanel::revealEntry(const QString& text) {
    m_model->flush();
    for (int row = m_filter->rowCount() - 1; row >= 0; --row) {
        QModelIndex i = m_filter->index(row, 0);
        if (!i.data(LogModel::TextRole).toString().contains(text)) continue;
        m_view->setCurrentIndex(i);
        m_view->scrollTo(i, QAbstractItemView::PositionAtCenter);
        return true;
    }
    return false;
}

QString LogPanel::visibleText(bool selectedOnly) const {
    m_model->flush();
    QStringList lines;
    if (selectedOnly) {
        QModelIndexList rows = m_view->selectionModel()->selectedIndexes();
        std::sort(rows.begin(), rows.end(), [](const QModelIndex& a, const QModelIndex& b) { return a.row() < b.row(); });
        for (const QModelIndex& i : rows) lines << i.data().toString();
    } else {
        for (int row = 0; row < m_filter->rowCount(); ++row) lines << m_filter->index(row, 0).data().toString();
    }
    return lines.join(QLatin1Char('\n'));
}

void LogPanel::copyToClipboard() {
    bool any = m_view->selectionModel()->hasSelection();
    QApplication::clipboard()->setText(visibleText(any));
}

void LogPanel::clear() {
    if (m_log) m_log->clear();
}

}  // namespace kiln::ui
