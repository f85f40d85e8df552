// SPDX-License-Identifier: Apache-2.0
// The child-process import: arguments for kiln-import, the time limit, Cancel, and the one JSON
// line the child hands back (its report and files, or its error with code and parameters).
#include "app/kiln_import/import_process.h"

#include <QCoreApplication>
#include <QEventLoop>
#include <QFileInfo>
#include <QProcess>
#include <QProcessEnvironment>
#include <QStandardPaths>
#include <QTimer>

namespace kiln::app {
using engine::Error;
using engine::ErrorCode;
using nlohmann::json;

ImportOutcome outcomeOf(const ImportJobResult& r) {
    return {r.report, r.projectPath, r.weightsPath, r.reportPath, r.headRemoved, r.headAdded};
}

std::string childResultLine(const engine::Result<ImportJobResult>& result) {
    json line = {{"kiln_import_child", 1}, {"ok", result.ok()}};
    if (result.ok()) {
        line["report"] = result->report;
        line["project"] = result->projectPath;
        line["weights"] = result->weightsPath;
        line["report_path"] = result->reportPath;
        line["head_removed"] = result->headRemoved;
        line["head_added"] = result->headAdded;
    } else {
        const Error& e = result.error();
        json params = json::array();
        for (const auto& [k, v] : e.params) params.push_back({k, v});
        line["error"] = {{"code", engine::errorCodeName(e.code)}, {"message", e.message}, {"node", e.node}, {"file", e.file}, {"line", e.line}, {"column", e.column}, {"params", params}};
    }
    return line.dump(-1, ' ', false, json::error_handler_t::replace);
}

namespace {

ErrorCode codeFromName(const std::string& name) {
    for (int c = 0; c <= static_cast<int>(ErrorCode::PluginError); ++c)
        if (name == engine::errorCodeName(static_cast<ErrorCode>(c))) return static_cast<ErrorCode>(c);
    return ErrorCode::Internal;
}

Error noResult(const std::string& model, const std::string& why) {
    return Error(ErrorCode::FileRead, "the process reading the model ended without a result: " + why)
        .withFile(model)
        .with("path", model)
        .with("reason", "no result");
}

}  // namespace

engine::Result<ImportOutcome> parseChildResult(const std::string& stdoutText, const std::string& model) {
    json line;
    size_t end = stdoutText.size();
    while (end > 0) {
        const size_t begin = stdoutText.rfind('\n', end - 1);
        const size_t from = begin == std::string::npos ? 0 : begin + 1;
        json j = json::parse(stdoutText.substr(from, end - from), nullptr, false);
        if (j.is_object() && j.contains("kiln_import_child")) {
            line = std::move(j);
            break;
        }
        if (begin == std::string::npos) break;
        end = begin;
    }
    if (!line.is_object()) return noResult(model, "no result line on its output");
    try {
        if (!line.at("ok").get<bool>()) {
            const json& e = line.at("error");
            Error err(codeFromName(e.at("code").get<std::string>()), e.at("message").get<std::string>());
            err.node = e.value("node", std::string());
            err.file = e.value("file", std::string());
            err.line = e.value("line", 0);
            err.column = e.value("column", 0);
            for (const auto& p : e.at("params")) err.with(p.at(0).get<std::string>(), p.at(1).get<std::string>());
            return err;
        }
        ImportOutcome o;
        o.report = line.at("report");
        o.projectPath = line.at("project").get<std::string>();
        o.weightsPath = line.at("weights").get<std::string>();
        o.reportPath = line.at("report_path").get<std::string>();
        o.headRemoved = line.at("head_removed").get<std::vector<std::string>>();
        o.headAdded = line.at("head_added").get<std::vector<std::string>>();
        return o;
    } catch (const json::exception& e) {
        return noResult(model, std::string("its result line is malformed: ") + e.what());
    }
}

struct ImportProcess::State {
    QProcess process;
    QTimer timer;
    std::string model;
    int timeoutS = 0;
    bool cancelled = false, timedOut = false, done = true;
    QByteArray out, err;
};

ImportProcess::ImportProcess() : m_s(std::make_unique<State>()) {
    m_s->timer.setSingleShot(true);
    QObject::connect(&m_s->timer, &QTimer::timeout, [this] {
        m_s->timedOut = true;
        m_s->process.kill();
    });
    QObject::connect(&m_s->process, &QProcess::readyReadStandardOutput, [this] { m_s->out += m_s->process.readAllStandardOutput(); });
    QObject::connect(&m_s->process, &QProcess::readyReadStandardError, [this] { m_s->err += m_s->process.readAllStandardError(); });
    QObject::connect(&m_s->process, &QProcess::errorOccurred, [this](QProcess::ProcessError e) {
        if (e != QProcess::FailedToStart || m_s->done) return;
        finish(Error(ErrorCode::Internal, "could not start " + m_program.toStdString() + ": " + m_s->process.errorString().toStdString())
                   .withFile(m_s->model)
                   .with("reason", "not started")
                   .with("program", m_program.toStdString()));
    });
    QObject::connect(&m_s->process, &QProcess::finished, [this](int code, QProcess::ExitStatus status) {
        if (m_s->done) return;
        m_s->out += m_s->process.readAllStandardOutput();
        const std::string& model = m_s->model;
        if (m_s->cancelled) {
            finish(Error(ErrorCode::Cancelled, "the import was cancelled").withFile(model).with("path", model));
        } else if (m_s->timedOut) {
            finish(Error(ErrorCode::FileRead, "reading the model did not finish within " + std::to_string(m_s->timeoutS) +
                                                  " s; the file is probably damaged (the HDF5 library does not stop on some damage)")
                       .withFile(model)
                       .with("path", model)
                       .with("reason", "timeout")
                       .with("seconds", std::to_string(m_s->timeoutS)));
        } else if (status == QProcess::CrashExit) {
            finish(Error(ErrorCode::FileRead, "the HDF5 library crashed reading the model; the file is damaged")
                       .withFile(model)
                       .with("path", model)
                       .with("reason", "crashed"));
        } else {
            auto r = parseChildResult(m_s->out.toStdString(), model);
            if (!r.ok() && r.error().param("reason") == "no result") {
                // What the child said last, for the detail.
                const QString said = QString::fromLocal8Bit(m_s->err).trimmed().right(400);
                r.error().message += " (exit status " + std::to_string(code) + (said.isEmpty() ? std::string() : ": " + said.toStdString()) + ")";
            }
            finish(std::move(r));
        }
    });
}

ImportProcess::~ImportProcess() {
    m_onFinished = nullptr;
    if (m_s->process.state() != QProcess::NotRunning) {
        m_s->done = true;
        m_s->process.kill();
        m_s->process.waitForFinished(5000);
    }
}

QString ImportProcess::findProgram() {
    const QString dir = QCoreApplication::applicationDirPath();
    for (const QString& c : {dir + QStringLiteral("/kiln-import"), dir + QStringLiteral("/../kiln-import"),
                             dir + QStringLiteral("/../app/kiln-import")})
        if (QFileInfo(c).isExecutable() && QFileInfo(c).isFile()) return QFileInfo(c).canonicalFilePath();
    return QStandardPaths::findExecutable(QStringLiteral("kiln-import"));
}

bool ImportProcess::isRunning() const { return !m_s->done; }

bool ImportProcess::start(const ImportJobRequest& req, int timeoutS) {
    if (!m_s->done) return false;
    m_result.reset();
    m_s->model = req.model;
    m_s->timeoutS = timeoutS;
    m_s->cancelled = m_s->timedOut = false;
    m_s->out.clear();
    m_s->err.clear();
    m_s->done = false;
    QStringList args{QString::fromStdString(req.model), QStringLiteral("-o"), QString::fromStdString(req.project)};
    if (!req.weightsOut.empty()) args << QStringLiteral("--weights-out") << QString::fromStdString(req.weightsOut);
    if (!req.reportOut.empty()) args << QStringLiteral("--report") << QString::fromStdString(req.reportOut);
    if (!req.replaceHeadAfter.empty())
        args << QStringLiteral("--replace-head-after") << QString::fromStdString(req.replaceHeadAfter) << QStringLiteral("--classes")
             << QString::number(req.classes) << QStringLiteral("--dropout") << QString::number(req.dropout, 'g', 17);
    args << m_extra;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QString::fromLatin1(kImportChildVariable), QStringLiteral("1"));
    m_s->process.setProcessEnvironment(env);
    m_s->process.setProcessChannelMode(m_forwardErrors ? QProcess::ForwardedErrorChannel : QProcess::SeparateChannels);
    if (m_program.isEmpty()) {
        finish(Error(ErrorCode::FileNotFound, "kiln-import was not found next to the program or on PATH")
                   .withFile(req.model)
                   .with("reason", "no program")
                   .with("path", "kiln-import"));
        return true;
    }
    if (timeoutS > 0) m_s->timer.start(timeoutS * 1000);
    m_s->process.start(m_program, args);
    return true;
}

void ImportProcess::cancel() {
    if (m_s->done) return;
    m_s->cancelled = true;
    m_s->process.kill();
}

void ImportProcess::finish(engine::Result<ImportOutcome> r) {
    m_s->done = true;
    m_s->timer.stop();
    m_result = std::make_unique<engine::Result<ImportOutcome>>(std::move(r));
    if (m_onFinished) {
        auto f = m_onFinished;  // the callback may replace it
        f();
    }
}

const engine::Result<ImportOutcome>& ImportProcess::waitForResult() {
    if (!m_result) {
        QEventLoop loop;
        auto previous = m_onFinished;
        m_onFinished = [&] {
            if (previous) previous();
            loop.quit();
        };
        if (!m_result) loop.exec();
        m_onFinished = previous;
    }
    return *m_result;
}

}  // namespace kiln::app
