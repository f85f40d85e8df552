// SPDX-License-Identifier: Apache-2.0
// translations/kiln_zh_CN.ts is complete (no unfinished or empty message outside vanished and
// obsolete ones), the compiled :/i18n/kiln_zh_CN.qm loads and gives the .ts translations.
// kiln-test-labels: ui
// kiln-test-libs: kiln_app_common
#include <QFile>
#include <QTest>
#include <QTranslator>
#include <QXmlStreamReader>

namespace {
struct Message {
    QString context, source, comment, translation, type;
    bool numerus = false;
    int line = 0;
};

QList<Message> parseTs(const QString& path, QString* error) {
    QList<Message> out;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        *error = f.errorString();
        return out;
    }
    QXmlStreamReader xml(&f);
    QString context;
    Message m;
    bool inMessage = false;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement()) {
            const auto name = xml.name();
            if (name == QLatin1String("context")) {
                context.clear();
            } else if (name == QLatin1String("name") && !inMessage) {
                context = xml.readElementText();
            } else if (name == QLatin1String("message")) {
                inMessage = true;
                m = Message{context, {}, {}, {}, {}, xml.attributes().value(QLatin1String("numerus")) == QLatin1String("yes"),
                            static_cast<int>(xml.lineNumber())};
            } else if (inMessage && name == QLatin1String("source")) {
                m.source = xml.readElementText();
            } else if (inMessage && name == QLatin1String("comment")) {
                m.comment = xml.readElementText();
            } else if (inMessage && name == QLatin1String("translation")) {
                m.type = xml.attributes().value(QLatin1String("type")).toString();
                if (m.numerus) {
                    // <numerusform> children: all must be filled; keep the first for comparison.
                    QStringList forms;
                    while (xml.readNextStartElement()) forms << xml.readElementText();
                    m.translation = forms.contains(QString()) || forms.isEmpty() ? QString() : forms.first();
                } else {
                    m.translation = xml.readElementText();
                }
            }
        } else if (xml.isEndElement() && xml.name() == QLatin1String("message")) {
            inMessage = false;
            out << m;
        }
    }
    if (xml.hasError()) *error = QStringLiteral("%1:%2: %3").arg(path).arg(xml.lineNumber()).arg(xml.errorString());
    return out;
}

bool retired(const Message& m) { return m.type == QLatin1String("vanished") || m.type == QLatin1String("obsolete"); }
}  // namespace

class TestTranslations : public QObject {
    Q_OBJECT

private slots:
    void chineseIsComplete() {
        QString error;
        const QList<Message> messages = parseTs(QStringLiteral(KILN_SOURCE_DIR "/translations/kiln_zh_CN.ts"), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(messages.size() > 20);
        QStringList missing;
        for (const Message& m : messages) {
            if (retired(m)) continue;
            if (m.type == QLatin1String("unfinished") || m.translation.trimmed().isEmpty())
                missing << QStringLiteral("line %1: [%2] \"%3\"%4")
                               .arg(m.line)
                               .arg(m.context, m.source, m.type == QLatin1String("unfinished") ? QStringLiteral(" (unfinished)") : QString());
        }
        QVERIFY2(missing.isEmpty(), qPrintable(QStringLiteral("%1 untranslated message(s) in kiln_zh_CN.ts:\n").arg(missing.size()) +
                                               missing.join(QLatin1Char('\n'))));
    }

    void compiledTranslationMatchesTheSource() {
        QTranslator translator;
        QVERIFY2(translator.load(QStringLiteral(":/i18n/kiln_zh_CN.qm")), "the .qm is not compiled into kiln_app_common");
        QCOMPARE(translator.language(), QStringLiteral("zh_CN"));
        QString error;
        const QList<Message> messages = parseTs(QStringLiteral(KILN_SOURCE_DIR "/translations/kiln_zh_CN.ts"), &error);
        int checked = 0;
        QStringList stale;
        for (const Message& m : messages) {
            if (retired(m) || m.numerus || m.type == QLatin1String("unfinished") || m.translation.isEmpty()) continue;
            const QString got = translator.translate(m.context.toUtf8().constData(), m.source.toUtf8().constData(),
                                                     m.comment.isEmpty() ? nullptr : m.comment.toUtf8().constData());
            if (got != m.translation) stale << QStringLiteral("[%1] \"%2\": .qm has \"%3\"").arg(m.context, m.source, got);
            ++checked;
        }
        QVERIFY(checked > 0);
        QVERIFY2(stale.isEmpty(), qPrintable(stale.join(QLatin1Char('\n'))));
    }

    void knownStringsTranslate() {
        QTranslator translator;
        QVERIFY(translator.load(QStringLiteral(":/i18n/kiln_zh_CN.qm")));
        QCOMPARE(translator.translate("Cli", "Trains a Kiln project without the graphical interface."),
                 QStringLiteral("无需图形界面即可训练 Kiln 项目。"));
        // The studio's menus are translated too.
        const QString file = translator.translate("kiln::app::MainWindow", "&File");
        QVERIFY2(!file.isEmpty() && file != QLatin1String("&File"), "the main window's File menu has no Chinese text");
        QTranslator english;
        QVERIFY(english.load(QStringLiteral(":/i18n/kiln_en.qm")));
    }
};

QTEST_GUILESS_MAIN(TestTranslations)
#include "tst_translations.moc"
