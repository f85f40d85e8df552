// SPDX-License-Identifier: Apache-2.0
// kiln-train --sweep: runs api::runSweep, prints each trial as it ends and the results table.
#include "app/kiln_train/sweep.h"

#include <QCoreApplication>
#include <QStringList>

#include <nlohmann/json.hpp>

#include "app/common/cli.h"
#include "app/common/error_text.h"

namespace kiln::app {

namespace {
class SweepCli {
    Q_DECLARE_TR_FUNCTIONS(SweepCli)
};

using namespace kiln::engine;

QString valueText(const nlohmann::json& v) {
    if (v.is_number_integer()) return QString::number(v.get<int64_t>());
    if (v.is_number()) return QString::number(v.get<double>(), 'g', 4);
    if (v.is_string()) return QString::fromStdString(v.get<std::string>());
    return QString::fromStdString(v.dump());
}

QString paramsText(const nlohmann::json& params) {
    QStringList parts;
    for (const auto& [path, value] : params.items()) parts << QStringLiteral("%1=%2").arg(QString::fromStdString(path), valueText(value));
    return parts.join(QStringLiteral(", "));
}

QString statusText(api::TrialStatus s) {
    switch (s) {
    case api::TrialStatus::Completed: return SweepCli::tr("completed");
    case api::TrialStatus::Pruned: return SweepCli::tr("pruned");
    case api::TrialStatus::Failed: return SweepCli::tr("failed");
    case api::TrialStatus::Cancelled: return SweepCli::tr("cancelled");
    }
    return {};
}

QString objectiveText(const std::optional<double>& v) { return v ? QString::number(*v, 'f', 4) : QStringLiteral("-"); }

}  // namespace

int runSweepCli(const io::Project& project, const std::string& projectPath, const SweepCliOptions& options) {
    const QString program = QStringLiteral("kiln-train");
    auto spec = api::loadSweepSpec(options.specPath);
    if (!spec.ok()) return reportError(program, spec.error());
    if (!spec->epochs && options.epochs) spec->epochs = options.epochs;
    {
        auto checked = api::checkSweepSpec(*spec, project);
        if (!checked.ok()) return reportError(program, Error(checked.error()).withFile(options.specPath));
    }
    const QString objective = QString::fromStdString(spec->objective);
    const bool verbose = !options.json && !options.quiet;
    auto onEvent = [&](const api::SweepEvent& e) {
        if (!verbose) return;
        const auto& t = e.trial;
        if (e.kind == api::SweepEvent::Kind::TrialStarted) {
            printOut(SweepCli::tr("trial %1/%2: %3").arg(t.number).arg(e.trials).arg(paramsText(t.params)));
        } else if (e.kind == api::SweepEvent::Kind::Epoch) {
            printOut(SweepCli::tr("  epoch %1/%2 - %3: %4").arg(e.epoch).arg(e.epochs).arg(objective).arg(e.value, 0, 'f', 4));
        } else if (t.status == api::TrialStatus::Failed) {
            printOut(SweepCli::tr("  failed: %1").arg(ErrorText::describe(t.failure)));
        } else {
            printOut(SweepCli::tr("  %1: %2 %3 after %n epoch(s) in %4 s", nullptr, t.epochs)
                         .arg(statusText(t.status), objective, objectiveText(t.objective))
                         .arg(t.seconds, 0, 'f', 1));
        }
    };
    auto outcome = api::runSweep(project, projectPath, *spec, options.sweep, onEvent);
    if (!outcome.ok()) {
        Error e = outcome.error();
        if (e.code == ErrorCode::ConfigError && e.file.empty() && e.param("field").rfind("objective", 0) == 0) e.withFile(options.specPath);
        return reportError(program, e, &project);
    }
    const auto& o = *outcome;
    const api::TrialResult* best = o.best >= 0 ? &o.trials[size_t(o.best)] : nullptr;

    int status = 0;
    if (!options.applyBestTo.empty()) {
        if (!best) {
            printErr(SweepCli::tr("kiln-train: no trial has a value of %1, so there is no best project to write.").arg(objective));
            status = 1;
        } else {
            auto applied = api::applySweepParameters(project, best->params);
            if (!applied.ok()) return reportError(program, applied.error(), &project);
            auto saved = io::saveProject(*applied, options.applyBestTo);
            if (!saved.ok()) return reportError(program, saved.error());
        }
    }

    if (options.json) {
        nlohmann::json trials = nlohmann::json::array();
        for (const auto& t : o.trials) trials.push_back(api::trialJson(t));
        nlohmann::json out = {{"sweep_id", o.sweepId},
                              {"objective", spec->objective},
                              {"mode", spec->mode == api::ObjectiveMode::Max ? "max" : "min"},
                              {"trials", trials},
                              {"cancelled", o.cancelled},
                              {"seconds", o.seconds}};
        out["best"] = best ? api::trialJson(*best) : nlohmann::json(nullptr);
        if (!options.applyBestTo.empty() && best) out["applied_to"] = options.applyBestTo;
        printOut(QString::fromStdString(out.dump()));
    } else {
        if (!options.quiet) printOut(QString());
        printOut(QStringLiteral("%1  %2  %3  %4  %5  %6")
                     .arg(SweepCli::tr("trial"), 5)
                     .arg(SweepCli::tr("status"), -9)
                     .arg(objective, 12)
                     .arg(SweepCli::tr("epochs"), 6)
                     .arg(SweepCli::tr("seconds"), 8)
                     .arg(SweepCli::tr("parameters")));
        for (const auto& t : o.trials) {
            printOut(QStringLiteral("%1  %2  %3  %4  %5  %6")
                         .arg(t.number, 5)
                         .arg(statusText(t.status), -9)
                         .arg(objectiveText(t.objective), 12)
                         .arg(t.epochs, 6)
                         .arg(t.seconds, 8, 'f', 1)
                         .arg(paramsText(t.params)));
        }
        if (best) {
            printOut(SweepCli::tr("Best: trial %1, %2 %3 (epoch %4): %5")
                         .arg(best->number)
                         .arg(objective, objectiveText(best->objective))
                         .arg(best->bestEpoch)
                         .arg(paramsText(best->params)));
            if (!options.applyBestTo.empty())
                printOut(SweepCli::tr("Wrote the project with the best parameters to %1.").arg(QString::fromStdString(options.applyBestTo)));
        } else {
            printOut(SweepCli::tr("No trial has a value of %1.").arg(objective));
        }
        printOut(SweepCli::tr("Sweep %1: %n trial(s) in %2 s.", nullptr, int(o.trials.size()))
                     .arg(QString::fromStdString(o.sweepId))
                     .arg(o.seconds, 0, 'f', 1));
    }
    if (!best) status = 1;
    return status;
}

}  // namespace kiln::app
