// SPDX-License-Identifier: Apache-2.0
// Coverage of the op table: one row per OpKind in enum order with a unique name, documented
// attributes whose defaults pass their own specs, a shape rule and a CPU kernel for every row,
// and at least one valid and one invalid harness case (op_cases.h) for every OpKind.
#include <QtTest>

#include <map>
#include <set>
#include <string>
#include <variant>

#include "engine/graph/attr.h"
#include "engine/ops/op_table.h"
#include "engine/ops/plugin_ops.h"
#include "op_cases.h"

using namespace kiln::engine;
using namespace kiln::engine::ops;
using namespace kiln::tests::opcases;

namespace {

QString q(std::string_view s) {
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

bool holdsType(const AttrValue& v, AttrType t) {
    switch (t) {
    case AttrType::Bool:
        return std::holds_alternative<bool>(v);
    case AttrType::Int:
        return std::holds_alternative<int64_t>(v);
    case AttrType::Float:
        return std::holds_alternative<double>(v);
    case AttrType::String:
        return std::holds_alternative<std::string>(v);
    case AttrType::IntList:
        return std::holds_alternative<std::vector<int64_t>>(v);
    }
    return false;
}

}  // namespace

class TestOpTable : public QObject {
    Q_OBJECT

private slots:
    // The Plugin cases name the example plugin's operation (KILN_TEST_PLUGIN_DIR).
    void initTestCase() {
        Status loaded = loadPluginsFrom(std::string(KILN_TEST_PLUGIN_DIR) + "/group_norm.so");
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().message.c_str());
    }

    void rowsInEnumOrder() {
        const auto& table = opTable();
        QCOMPARE(static_cast<int>(table.size()), kOpKindCount);
        std::set<std::string_view> names;
        for (int i = 0; i < kOpKindCount; ++i) {
            const OpDef& row = table[static_cast<size_t>(i)];
            QCOMPARE(static_cast<int>(row.kind), i);
            QVERIFY2(!row.name.empty(), qPrintable(QString("row %1 has no name").arg(i)));
            QVERIFY2(names.insert(row.name).second, qPrintable("duplicate name " + q(row.name)));
            QVERIFY2(!row.doc.empty(), qPrintable(q(row.name) + " has no doc"));
            QCOMPARE(findOp(row.name), &row);
            QCOMPARE(&opDef(row.kind), &row);
        }
        QCOMPARE(findOp("NoSuchOp"), nullptr);
    }

    void rowsComplete() {
        for (const OpDef& row : opTable()) {
            const QString name = q(row.name);
            QVERIFY2(row.cpu != nullptr, qPrintable(name + " has no CPU kernel factory"));
            QVERIFY2(row.shape != nullptr, qPrintable(name + " has no shape rule"));
            QVERIFY2(row.minInputs >= 0, qPrintable(name));
            QVERIFY2(row.maxInputs == -1 || row.maxInputs >= row.minInputs, qPrintable(name));
            QCOMPARE(isLoss(row.kind), row.category == Category::Loss);
            QVERIFY2(QString(categoryName(row.category)) != "?", qPrintable(name));
            if (row.category == Category::Loss) {
                QVERIFY2(row.minInputs == 2 && row.maxInputs == 2,
                         qPrintable(name + ": a loss takes (prediction, target)"));
                QVERIFY2(row.params == nullptr, qPrintable(name + ": a loss has no parameters"));
            }
        }
        QCOMPARE(opDef(OpKind::Input).minInputs, 0);
        QCOMPARE(opDef(OpKind::Input).maxInputs, 0);
        QCOMPARE(opDef(OpKind::Input).category, Category::Input);
    }

    void attributesDocumentedWithValidDefaults() {
        QStringList bad;
        for (const OpDef& row : opTable()) {
            std::set<std::string> seen;
            for (const AttrSpec& spec : row.attrs) {
                const QString label = q(row.name) + "." + q(spec.name);
                QVERIFY2(!spec.name.empty(), qPrintable(q(row.name) + " has an unnamed attribute"));
                QVERIFY2(seen.insert(spec.name).second, qPrintable(label + " is declared twice"));
                QVERIFY2(!spec.doc.empty(), qPrintable(label + " has no doc"));
                QVERIFY2(holdsType(spec.defaultValue, spec.type),
                         qPrintable(label + ": default of the wrong type"));
                if (spec.type == AttrType::String && !spec.choices.empty())
                    QVERIFY2(spec.min == std::nullopt && spec.max == std::nullopt, qPrintable(label));
                if (spec.required) continue;
                auto v = coerceAttr(spec, spec.defaultValue, "n");
                if (!v.ok()) {
                    bad << label + ": " + q(v.error().message);
                    continue;
                }
                QVERIFY2(*v == spec.defaultValue, qPrintable(label + ": the default changes when validated"));
            }
        }
        QVERIFY2(bad.isEmpty(), qPrintable(bad.join("; ")));
    }

    void resolveFillsDefaults() {
        for (const OpDef& row : opTable()) {
            Node node;
            node.name = "n";
            node.op.assign(row.name.data(), row.name.size());
            auto attrs = resolveAttrs(row, node);
            const AttrSpec* required = nullptr;
            for (const auto& s : row.attrs)
                if (s.required && !required) required = &s;
            if (required) {
                QVERIFY2(!attrs.ok(),
                         qPrintable(q(row.name) + " accepted a node without its required attribute"));
                QCOMPARE(attrs.error().code, ErrorCode::BadAttribute);
                QVERIFY(attrs.error().message.find("\"" + required->name + "\"") != std::string::npos);
                QCOMPARE(q(attrs.error().node), QString("n"));
                continue;
            }
            QVERIFY2(attrs.ok(), qPrintable(q(row.name)));
            QCOMPARE(attrs->values().size(), row.attrs.size());
            for (const auto& s : row.attrs) {
                QVERIFY(attrs->has(s.name));
                QVERIFY(attrs->values().at(s.name) == s.defaultValue);
            }
        }
    }

    // The harness's case table covers every op, and every attribute of every op in a valid case.
    void casesCoverEveryOp() {
        const auto& cases = opCases();
        std::map<int, int> validCount, invalidCount;
        std::set<std::string> names;
        std::map<int, std::set<std::string>> attrsUsed;
        for (const OpCase& c : cases) {
            const int k = static_cast<int>(c.kind);
            QVERIFY2(k >= 0 && k < kOpKindCount, qPrintable(q(c.name)));
            QVERIFY2(names.insert(c.name).second, qPrintable("duplicate case name " + q(c.name)));
            const OpDef& def = opDef(c.kind);
            if (!c.valid()) {
                ++invalidCount[k];
                continue;
            }
            ++validCount[k];
            const int count = static_cast<int>(c.inputs.size());
            QVERIFY2(count >= def.minInputs && (def.maxInputs < 0 || count <= def.maxInputs),
                     qPrintable(q(c.name) + ": wrong number of inputs for a valid case"));
            QVERIFY2(!c.output.empty(), qPrintable(q(c.name) + ": a valid case needs its output shape"));
            for (const auto& in : c.inputs)
                QVERIFY2(!in.shape.empty() && in.shape[0] > 0,
                         qPrintable(q(c.name) + ": inputs need a concrete batch"));
            // A plugin operation's attributes come from its plugin's schema.
            std::vector<AttrSpec> specs = def.attrs;
            if (c.kind == OpKind::Plugin) {
                Node node;
                for (const auto& [key, value] : c.attrs) node.attrs.set(key, value);
                const PluginOp* op = pluginOpOf(node);
                QVERIFY2(op, qPrintable(q(c.name) + ": its plugin operation is not loaded"));
                specs.insert(specs.end(), op->attrs.begin(), op->attrs.end());
            }
            for (const auto& [key, value] : c.attrs) {
                bool known = false;
                for (const auto& s : specs) known = known || s.name == key;
                QVERIFY2(known, qPrintable(q(c.name) + ": valid case sets unknown attribute " + q(key)));
                attrsUsed[k].insert(key);
            }
        }
        for (const OpDef& row : opTable()) {
            const int k = static_cast<int>(row.kind);
            QVERIFY2(validCount[k] >= 1, qPrintable(q(row.name) + " has no valid harness case"));
            QVERIFY2(invalidCount[k] >= 1, qPrintable(q(row.name) + " has no invalid harness case"));
            for (const auto& s : row.attrs)
                QVERIFY2(attrsUsed[k].count(s.name) == 1,
                         qPrintable(q(row.name) + "." + q(s.name) + " is set by no valid harness case"));
        }
    }
};

QTEST_APPLESS_MAIN(TestOpTable)
#include "tst_op_table.moc"
