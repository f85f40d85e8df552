// SPDX-License-Identifier: Apache-2.0
// Plugin check results in words, from their findings.
#include "app/common/plugin_check_text.h"

#include "app/common/error_text.h"

namespace kiln::app {
namespace {

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

}  // namespace

QString PluginCheckText::caseText(const engine::api::PluginCheckResult& c) {
    using F = engine::api::PluginCheckFinding;
    if (!c.predictionsShape.empty()) {
        const QString shapes = tr("predictions %1, targets %2").arg(q(c.predictionsShape), q(c.targetsShape));
        return c.declaredCase.empty() ? shapes : tr("%1 (%2)").arg(q(c.declaredCase), shapes);
    }
    if (c.outcome == engine::api::PluginCheckOutcome::Skipped && c.finding == F::NoDefaultCase) return tr("defaults");
    if (c.outcome == engine::api::PluginCheckOutcome::Skipped && c.finding == F::NoShapesAccepted) return tr("shapes");
    return q(c.caseName);
}

QString PluginCheckText::detail(const engine::api::PluginCheckResult& c) {
    using F = engine::api::PluginCheckFinding;
    auto p = [&](const char* key) { return q(c.param(key)); };
    // The tensor a finding names, as the subject of a sentence.
    auto tensor = [&]() -> QString {
        const std::string t = c.param("tensor");
        if (t == "input") return tr("input %1").arg(p("input"));
        if (t == "output") return tr("the output");
        if (t == "parameter") return tr("the parameter \"%1\"").arg(p("parameter"));
        if (t == "predictions") return tr("the predictions' shape");
        if (t == "targets") return tr("the targets' shape");
        return q(t);
    };
    switch (c.finding) {
    case F::OutputShape: return tr("output %1").arg(p("shape"));
    case F::ForwardAgrees: return tr("%1 values agree with the reference").arg(p("count"));
    case F::GradientAgrees: return tr("%1 gradient values agree with central differences").arg(p("count"));
    case F::LossValuesAgree:
        return tr("%1 per-sample values, finite, the same with and without gradients; loss %2").arg(p("count"), p("loss"));
    case F::NoReference: return tr("the plugin has no reference forward");
    case F::NoBackward: return tr("the plugin has no backward kernel");
    case F::NoDefaultCase:
        return tr("no case can be made from the loss's defaults (%1); the plugin can declare loss check cases (ABI 1.2)")
            .arg(p("reason"));
    case F::NoShapesAccepted: return tr("the loss accepts none of the shapes the check tries: %1").arg(p("reasons"));
    case F::AttributesNotObject: return tr("its attributes are not a JSON object");
    case F::InputsMissing: return tr("its input shapes are missing");
    case F::InputShapeInvalid:
        return tr("input %1 %2 needs rank 1 to %3 and a concrete batch").arg(p("input"), p("shape"), p("max_rank"));
    case F::LossShapeRank:
        return tr("%1 %2 has rank %3 (2 to %4: the batch and at least one more dimension)")
            .arg(tensor(), p("shape"), p("rank"), p("max_rank"));
    case F::DimensionBelowOne: return tr("%1 %2 has dimension %3").arg(tensor(), p("shape"), p("dimension"));
    case F::TooManyValues: return tr("%1 %2 holds more than %3 values").arg(tensor(), p("shape"), p("limit"));
    case F::BatchesDiffer:
        return tr("the predictions %1 and the targets %2 have different batches").arg(p("predictions"), p("targets"));
    case F::WorkspaceTooLarge:
        return tr("the kernel asks for %1 scratch values, more than %2").arg(p("values"), p("limit"));
    case F::EngineError: {
        // Kiln's headline for the error's code, then the engine's words for it.
        QString text = p("message");
        if (c.error) text = ErrorText::headline(*c.error) + QStringLiteral(": ") + text;
        const std::string when = c.param("when");
        if (when == "symbolic_batch") return tr("with a symbolic batch: %1").arg(text);
        if (when == "with_gradients") return tr("with gradients: %1").arg(text);
        return text;
    }
    case F::SymbolicShapeDiffers:
        return tr("the output is %1 with a batch but %2 without").arg(p("shape"), p("symbolic"));
    case F::ReferenceFailed: return tr("the reference forward failed: %1").arg(p("reason"));
    case F::ForwardMismatch:
        return tr("element %1: kernel %2, reference %3").arg(p("element"), p("kernel"), p("reference"));
    case F::GradientMismatch: {
        const QString of = c.param("tensor") == "input" ? tr("input %1").arg(p("input")) : p("parameter");
        return tr("d/d %1 element %2: backward %3, finite difference %4").arg(of, p("element"), p("backward"), p("numeric"));
    }
    case F::LossNotFinite:
        return tr("sample %1: the value is %2 for finite predictions and targets").arg(p("sample"), p("value"));
    case F::LossValueWithGradients:
        return tr("sample %1: the value is %2 without gradients but %3 with them").arg(p("sample"), p("without"), p("with"));
    case F::LossNotPerSample:
        return tr("the value of sample %1 changes when only sample 0's predictions change").arg(p("sample"));
    case F::LossMeanMismatch: return tr("the loss is %1 but the mean of the values %2").arg(p("loss"), p("mean"));
    case F::LossGradientMismatch:
        return tr("d loss / d prediction [%1,%2]: gradient %3, finite difference %4")
            .arg(p("sample"), p("index"), p("gradient"), p("numeric"));
    }
    return q(c.detail);
}

}  // namespace kiln::app
