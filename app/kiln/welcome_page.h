// SPDX-License-Identifier: Apache-2.0
// The page the studio opens on when it starts without a project: start something (new, open,
// import, new from pretrained), the recent projects, the bundled examples with a picture of their graph, and a
// five-step tour that trains the Fashion-MNIST example end to end.
#pragma once

#include <QStringList>
#include <QWidget>

class QLabel;
class QListWidget;
class QPushButton;
class QToolButton;

namespace kiln::app {

class WelcomePage : public QWidget {
    Q_OBJECT
public:
    explicit WelcomePage(QWidget* parent = nullptr);

    // Fills the recent projects and the examples (with their pictures) again.
    void refresh(const QStringList& recent, const QStringList& examples);

    QListWidget* recentList() const { return m_recent; }
    QListWidget* exampleList() const { return m_examples; }
    // The tour's step buttons, in order.
    QList<QPushButton*> tourButtons() const { return m_tourButtons; }

    // A picture of a project's graph (its diagram, scaled into `size`); a null image when the
    // project cannot be read.
    static QImage projectThumbnail(const QString& path, const QSize& size);

signals:
    void newProjectRequested();
    void openRequested();
    void importRequested();
    void pretrainedRequested();
    void projectChosen(const QString& path);
    void exampleChosen(const QString& path);
    // Step `step` (0..4) of the tour was asked for.
    void tourStepRequested(int step);

protected:
    void changeEvent(QEvent* event) override;

private:
    void retranslate();

    QLabel* m_title = nullptr;
    QLabel* m_subtitle = nullptr;
    QPushButton* m_new = nullptr;
    QPushButton* m_open = nullptr;
    QPushButton* m_import = nullptr;
    QPushButton* m_pretrained = nullptr;
    QLabel* m_recentTitle = nullptr;
    QLabel* m_examplesTitle = nullptr;
    QLabel* m_tourTitle = nullptr;
    QListWidget* m_recent = nullptr;
    QListWidget* m_examples = nullptr;
    QList<QLabel*> m_tourTexts;
    QList<QPushButton*> m_tourButtons;
    QLabel* m_noRecent = nullptr;
};

}  // namespace kiln::app
