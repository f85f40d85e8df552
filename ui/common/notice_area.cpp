// SPDX-License-Identifier: Apache-2.0
// Notice strip: each notice is a small frame tinted by severity.
#include "ui/common/notice_area.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QIcon>
#include <QLabel>
#include <QPushButton>
#include <QStyle>
#include <QToolButton>
#include <QVBoxLayout>

#include "ui/common/theme.h"
#include "ui/common/themed_icon.h"

namespace kiln::ui {

namespace {
const char* kIconFor(Severity s) {
    switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    default: return "info";
    }
}

// The theme's tints per severity, with one text colour that reads on all three.
QString styleFor(Severity s) {
    const ThemeColors& c = Theme::instance().colors();
    const int i = s == Severity::Error ? 0 : s == Severity::Warning ? 1 : 2;
    return QStringLiteral("QFrame#notice { background: %1; border: 1px solid %2; border-radius: 4px; }"
                          " QFrame#notice QLabel { color: %3; }")
        .arg(c.noticeBackground[i].name(), c.noticeBorder[i].name(), c.noticeText.name());
}
}  // namespace

NoticeArea::NoticeArea(QWidget* parent) : QWidget(parent), m_layout(new QVBoxLayout(this)) {
    setObjectName(QStringLiteral("noticeArea"));
    m_layout->setContentsMargins(4, 4, 4, 0);
    m_layout->setSpacing(3);
    setVisible(false);
    connect(&Theme::instance(), &Theme::changed, this, [this] {
        for (QFrame* frame : findChildren<QFrame*>(QStringLiteral("notice"), Qt::FindDirectChildrenOnly))
            frame->setStyleSheet(styleFor(static_cast<Severity>(frame->property("severity").toInt())));
    });
}

int NoticeArea::post(Severity severity, const QString& text, const QList<NoticeAction>& actions, bool withDetails) {
    while (m_items.size() >= kMaxNotices) dismiss(m_items.front().id);
    const int id = m_nextId++;

    auto* frame = new QFrame(this);
    frame->setObjectName(QStringLiteral("notice"));
    frame->setProperty("noticeId", id);
    frame->setProperty("severity", static_cast<int>(severity));
    frame->setStyleSheet(styleFor(severity));
    auto* row = new QHBoxLayout(frame);
    row->setContentsMargins(6, 3, 3, 3);

    auto* icon = new QLabel(frame);
    const int px = style()->pixelMetric(QStyle::PM_SmallIconSize);
    icon->setPixmap(themedIcon(QString::fromLatin1(kIconFor(severity))).pixmap(px, px));
    row->addWidget(icon);
    auto* label = new QLabel(text, frame);
    label->setObjectName(QStringLiteral("noticeText"));
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    row->addWidget(label, 1);

    for (const NoticeAction& a : actions) {
        auto* button = new QPushButton(a.text, frame);
        button->setObjectName(a.objectName);
        auto trigger = a.trigger;
        connect(button, &QPushButton::clicked, this, [this, id, trigger] {
            dismiss(id);  // first, so that a trigger that posts a new notice sees a consistent list
            if (trigger) trigger();
        });
        row->addWidget(button);
    }
    if (withDetails) {
        auto* details = new QLabel(frame);
        details->setObjectName(QStringLiteral("noticeDetails"));
        details->setTextFormat(Qt::RichText);
        connect(details, &QLabel::linkActivated, this, [this, id, text] { emit detailsRequested(id, text); });
        row->addWidget(details);
    }
    auto* close = new QToolButton(frame);
    close->setObjectName(QStringLiteral("noticeClose"));
    close->setIcon(themedIcon(QStringLiteral("close")));
    close->setAutoRaise(true);
    connect(close, &QToolButton::clicked, this, [this, id] { dismiss(id); });
    row->addWidget(close);
    retranslateItem(frame);

    m_layout->addWidget(frame);
    m_items.push_back({id, text, frame});
    setVisible(true);
    emit countChanged(m_items.size());
    return id;
}

void NoticeArea::retranslateItem(QWidget* frame) {
    if (auto* details = frame->findChild<QLabel*>(QStringLiteral("noticeDetails")))
        details->setText(QStringLiteral("<a href=\"details\">%1</a>").arg(tr("Details").toHtmlEscaped()));
    if (auto* close = frame->findChild<QToolButton*>(QStringLiteral("noticeClose"))) close->setToolTip(tr("Dismiss"));
}

void NoticeArea::dismiss(int id) {
    for (int i = 0; i < m_items.size(); ++i) {
        if (m_items[i].id != id) continue;
        QWidget* frame = m_items[i].frame;
        m_items.removeAt(i);
        frame->hide();
        frame->deleteLater();
        if (m_items.isEmpty()) setVisible(false);
        emit countChanged(m_items.size());
        return;
    }
}

void NoticeArea::dismissAll() {
    while (!m_items.isEmpty()) dismiss(m_items.front().id);
}

int NoticeArea::count() const { return m_items.size(); }

QList<int> NoticeArea::ids() const {
    QList<int> out;
    for (const Item& i : m_items) out << i.id;
    return out;
}

QString NoticeArea::text(int id) const {
    for (const Item& i : m_items)
        if (i.id == id) return i.text;
    return {};
}

QWidget* NoticeArea::noticeWidget(int id) const {
    for (const Item& i : m_items)
        if (i.id == id) return i.frame;
    return nullptr;
}

void NoticeArea::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange)
        for (const Item& i : m_items) retranslateItem(i.frame);
    QWidget::changeEvent(event);
}

}  // namespace kiln::ui
