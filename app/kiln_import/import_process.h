// SPDX-License-Identifier: Apache-2.0
// One import run by a kiln-import child process, as kiln-import itself reads Keras files and as the
// studio's File > Import Model reads every model: the HDF5 library can crash or run for hours on
// some damaged files, and a child that does so is ended (time limit, or the user's Cancel) without
// taking the caller with it. Asynchronous (Qt signals of the QProcess, no waiting on the caller's
// thread) unless waitForResult() is called. Qt Core only.
#pragma once

#include <QString>
#include <QStringList>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/kiln_import/import_job.h"

namespace kiln::app {

// What a finished import hands back: the report (docs/transfer.md) and the files written.
struct ImportOutcome {
    nlohmann::json report;
    std::string projectPath, weightsPath, reportPath;
    std::vector<std::string> headRemoved, headAdded;
};

ImportOutcome outcomeOf(const ImportJobResult& r);

// The environment variable that makes kiln-import do the import itself and hand the outcome back
// on stdout as one JSON line (childResultLine), instead of starting a child of its own.
inline constexpr const char* kImportChildVariable = "KILN_IMPORT_CHILD";
// The child's one line of stdout: {"kiln_import_child": 1, "ok": true, "report": ..., ...} or
// {"kiln_import_child": 1, "ok": false, "error": {"code", "message", "node", "file", "line", "column", "params"}}.
std::string childResultLine(const engine::Result<ImportJobResult>& result);
// Reads that line back (the last line of `stdoutText` that is one); an error when there is none.
engine::Result<ImportOutcome> parseChildResult(const std::string& stdoutText, const std::string& model);

class ImportProcess {
public:
    ImportProcess();
    ~ImportProcess();  // ends a child still running
    ImportProcess(const ImportProcess&) = delete;
    ImportProcess& operator=(const ImportProcess&) = delete;

    // kiln-import beside the running program (an installed bin/, the studio in <build>/app/kiln, a
    // test in <build>/tests), else on PATH; empty when there is none.
    static QString findProgram();

    void setProgram(const QString& program) { m_program = program; }
    QString program() const { return m_program; }
    // Arguments added after the request's (e.g. --plugin LIB).
    void setExtraArguments(const QStringList& args) { m_extra = args; }
    // The child's stderr goes to ours (kiln-import) instead of being kept for the error.
    void setForwardErrors(bool forward) { m_forwardErrors = forward; }
    // Called on the caller's thread once the child has ended, been ended or failed to start.
    void setOnFinished(std::function<void()> f) { m_onFinished = std::move(f); }

    // Starts the child on `request`; it may take `timeoutS` seconds (0: no limit). False when one
    // is running already.
    bool start(const ImportJobRequest& request, int timeoutS);
    // Ends the child; the result is a Cancelled error.
    void cancel();
    bool isRunning() const;
    // Valid once finished: the outcome, or the error (the child's own, or Kiln's words for a child
    // that crashed, ran out of time, was cancelled or could not start).
    const engine::Result<ImportOutcome>& result() const { return *m_result; }
    // Runs an event loop until the child has ended (kiln-import); returns result().
    const engine::Result<ImportOutcome>& waitForResult();

private:
    struct State;
    void finish(engine::Result<ImportOutcome> r);

    QString m_program;
    QStringList m_extra;
    bool m_forwardErrors = false;
    std::function<void()> m_onFinished;
    std::unique_ptr<engine::Result<ImportOutcome>> m_result;
    std::unique_ptr<State> m_s;
};

}  // namespace kiln::app
