// SPDX-License-Identifier: Apache-2.0
// Non-modal notices shown in a strip above the canvas: a severity icon, the text, optional action
// buttons, a "Details" link (to the log) and a close button. Nothing here blocks the user.
#pragma once

#include <QList>
#include <QString>
#include <QWidget>

#include <functional>

#include "ui/common/message_log.h"

class QVBoxLayout;

namespace kiln::ui {

struct NoticeAction {
    QString text;                    // already translated
    std::function<void()> trigger;   // runs, then the notice closes
    QString objectName = {};         // for tests and accessibility
};

class NoticeArea : public QWidget {
    Q_OBJECT

public:
    static constexpr int kMaxNotices = 4;  // older notices give way to newer ones

    explicit NoticeArea(QWidget* parent = nullptr);

    // Shows a notice and returns its id. With `withDetails`, a "Details" link emits detailsRequested.
    int post(Severity severity, const QString& text, const QList<NoticeAction>& actions = {}, bool withDetails = true);
    void dismiss(int id);
    void dismissAll();
    int count() const;
    QList<int> ids() const;
    QString text(int id) const;
    QWidget* noticeWidget(int id) const;  // the notice's frame (its buttons are children by objectName)

signals:
    void detailsRequested(int id, const QString& text);
    void countChanged(int count);

protected:
    void changeEvent(QEvent* event) override;

private:
    struct Item {
        int id;
        QString text;
        QWidget* frame;
    };
    void retranslateItem(QWidget* frame);
    QVBoxLayout* m_layout;
    QList<Item> m_items;
    int m_nextId = 1;
};

}  // namespace kiln::ui
