// SPDX-License-Identifier: Apache-2.0
// kiln: the graphical studio. Opens the project given on the command line (if any), offers the
// recovery of unsaved work after a crash, and can grab a screenshot of its window and quit.
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QIcon>
#include <QScreen>
#include <QTimer>

#include <cstdio>
#include <optional>

#include "app/common/error_text.h"
#include "app/kiln/main_window.h"
#include "engine/api/plugins.h"
#include "ui/common/app_settings.h"
#include "ui/common/language.h"
#include "ui/common/message_log.h"
#include "ui/common/resources.h"
#include "ui/common/theme.h"

namespace {
class Cli {
    Q_DECLARE_TR_FUNCTIONS(Cli)
};
}  // namespace

int main(int argc, char** argv) {
    // Fractional scale factors (1.25, 1.5) as they are: the icons are SVG and stay sharp.
    QApplication::setHighDpiScaleFactorRoundingPolicy(Qt::HighDpiScaleFactorRoundingPolicy::PassThrough);
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("Kiln"));
    QApplication::setApplicationName(QStringLiteral("Kiln"));
    QApplication::setApplicationVersion(QStringLiteral(KILN_VERSION));
    QApplication::setDesktopFileName(QStringLiteral("kiln"));
    kiln::ui::initCommonResources();
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/kiln.svg")));

    // Messages of every thread go to the log panel from here on.
    kiln::ui::MessageLog log;
    kiln::ui::MessageLog::installMessageHandler();

    // The language must be known before the parser's texts are made.
    QString lang;
    for (int i = 1; i < argc; ++i) {
        const QString arg = QString::fromLocal8Bit(argv[i]);
        if (arg == QLatin1String("--lang") && i + 1 < argc) lang = QString::fromLocal8Bit(argv[i + 1]);
        else if (arg.startsWith(QLatin1String("--lang="))) lang = arg.mid(7);
    }
    const QString code = kiln::ui::Language::resolve(lang.isEmpty() ? kiln::ui::AppSettings::language() : lang);
    kiln::ui::Language::apply(code);

    QCommandLineParser parser;
    parser.setApplicationDescription(Cli::tr("Kiln: design, train, export and serve neural networks."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("project"), Cli::tr("A project file (*.kiln) to open."), QStringLiteral("[project]"));
    const QCommandLineOption langOption(QStringLiteral("lang"), Cli::tr("User interface language: en or zh_CN (default: the setting, else the system's)."),
                                        QStringLiteral("code"));
    const QCommandLineOption shotOption(QStringLiteral("screenshot"), Cli::tr("Save a picture of the window to this PNG file and quit."),
                                        QStringLiteral("file"));
    const QCommandLineOption delayOption(QStringLiteral("screenshot-delay"), Cli::tr("Milliseconds to wait before the screenshot (default 1500)."),
                                         QStringLiteral("ms"), QStringLiteral("1500"));
    const QCommandLineOption sizeOption(QStringLiteral("size"), Cli::tr("Window size, e.g. 1600x1000."), QStringLiteral("WxH"));
    const QCommandLineOption workspaceOption(QStringLiteral("workspace"),
                                             Cli::tr("Workspace to show first: design, data, train, evaluate or deploy."),
                                             QStringLiteral("name"));
    const QCommandLineOption themeOption(QStringLiteral("theme"),
                                         Cli::tr("Colour theme for this session: system, light or dark (default: the setting)."),
                                         QStringLiteral("name"));
    parser.addOption(workspaceOption);
    parser.addOption(themeOption);
    parser.addOption(langOption);
    parser.addOption(shotOption);
    parser.addOption(delayOption);
    parser.addOption(sizeOption);
    parser.process(app);
    if (parser.isSet(langOption) && !kiln::ui::Language::available().contains(parser.value(langOption))) {
        std::fprintf(stderr, "%s\n", qPrintable(Cli::tr("kiln: unknown language \"%1\" (use en or zh_CN)").arg(parser.value(langOption))));
        return 2;
    }

    // The theme before any window exists, so that nothing is painted twice. The option does not
    // change the stored setting.
    const std::optional<kiln::ui::ThemeChoice> theme =
        kiln::ui::Theme::fromId(parser.isSet(themeOption) ? parser.value(themeOption) : kiln::ui::AppSettings::theme());
    if (!theme) {
        std::fprintf(stderr, "%s\n",
                     qPrintable(Cli::tr("kiln: unknown theme \"%1\" (use system, light or dark)").arg(parser.value(themeOption))));
        return 2;
    }
    kiln::ui::Theme::instance().apply(*theme);

    // Plugins (the user's folder and KILN_PLUGIN_PATH; QGuiApplication takes -plugin for its own
    // plugins, so the studio has no --plugin) load before the palette is made. A plugin that fails
    // to load does not stop the studio: its error goes to stderr and stays listed in Help > Plugins.
    {
        std::vector<std::string> remembered;  // loaded with Help > Plugins > Load Plugin…
        for (const QString& p : kiln::ui::AppSettings::pluginPaths()) remembered.push_back(p.toStdString());
        for (const auto& e : kiln::engine::api::loadStartupPlugins(remembered))
            std::fprintf(stderr, "kiln: %s\n", qPrintable(kiln::app::ErrorText::describe(e)));
    }

    std::optional<kiln::app::MainWindow::Workspace> workspace;
    if (parser.isSet(workspaceOption)) {
        workspace = kiln::app::MainWindow::workspaceFromId(parser.value(workspaceOption));
        if (!workspace) {
            std::fprintf(stderr, "%s\n",
                         qPrintable(Cli::tr("kiln: unknown workspace \"%1\" (use design, data, train, evaluate or deploy)")
                                        .arg(parser.value(workspaceOption))));
            return 2;
        }
    }

    kiln::app::MainWindow window;
    if (parser.isSet(sizeOption)) {
        const QStringList wh = parser.value(sizeOption).split(QLatin1Char('x'));
        if (wh.size() == 2 && wh[0].toInt() > 0 && wh[1].toInt() > 0) window.resize(wh[0].toInt(), wh[1].toInt());
    }
    const bool screenshot = parser.isSet(shotOption);
    if (screenshot) {
        window.resetLayout();
        window.move(0, 0);
    }
    window.show();
    if (!parser.positionalArguments().isEmpty()) {
        const QString path = parser.positionalArguments().constFirst();
        // A shipped example opens as a template (Save asks for a new name).
        if (QFileInfo(path).absolutePath() == QFileInfo(kiln::app::MainWindow::examplesDirectory()).absoluteFilePath())
            window.openExample(path);
        else
            window.openProject(path);
    } else {
        window.showWelcome();
    }

    if (workspace) window.setWorkspace(*workspace);

    if (screenshot) {
        const QString out = parser.value(shotOption);
        QTimer::singleShot(parser.value(delayOption).toInt(), &window, [&window, out] {
            const bool ok = window.grab().save(out, "PNG");
            if (!ok) std::fprintf(stderr, "%s\n", qPrintable(Cli::tr("kiln: cannot write %1").arg(out)));
            QApplication::exit(ok ? 0 : 1);
        });
    }
    return app.exec();
}
