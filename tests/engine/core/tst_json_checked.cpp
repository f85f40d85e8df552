// SPDX-License-Identifier: Apache-2.0
// Checked JSON parsing (depth, size and value limits enforced while parsing, errors with the
// source, position and JSON path) and SHA-256 known answers.
// kiln-test-libs: kiln_core
#include <QtTest>

#include <string>

#include "engine/core/json_checked.h"
#include "engine/core/sha256.h"

using namespace kiln::engine;
using nlohmann::json;

class TestJsonChecked : public QObject {
    Q_OBJECT

private slots:
    void parsesOrdinaryDocuments() {
        auto r = parseJsonChecked("{\"a\": [1, 2.5, \"x\", true, null, {\"b\": []}], \"c\": {\"d\": -3}}", JsonLimits{}, "doc");
        QVERIFY(r.ok());
        QCOMPARE(r.value(), json::parse("{\"a\": [1, 2.5, \"x\", true, null, {\"b\": []}], \"c\": {\"d\": -3}}"));
        QVERIFY(parseJsonChecked("42", JsonLimits{}, "doc").ok());
        // Exactly at the limit is fine: the top-level value is depth 1.
        JsonLimits three;
        three.maxDepth = 3;
        QVERIFY(parseJsonChecked("[[[1]]]", three, "doc").ok());
        QVERIFY(parseJsonChecked("{\"a\": {\"b\": [1]}}", three, "doc").ok());
    }

    void depthIsRefusedWhileParsing() {
        JsonLimits three;
        three.maxDepth = 3;
        auto r = parseJsonChecked("{\"a\": [1, {\"b\": {\"c\": 1}}]}", three, "cfg.json");
        QVERIFY(!r.ok());
        const Error& e = r.error();
        QCOMPARE(errorCodeName(e.code), errorCodeName(ErrorCode::ParseError));
        QCOMPARE(e.file, std::string("cfg.json"));
        QCOMPARE(e.line, 1);
        QCOMPARE(e.column, 17);  // the '{' after "b":
        QCOMPARE(e.param("path"), std::string("$.a[1].b"));
        QVERIFY2(e.message.find("nested deeper than 3 levels at byte 16") != std::string::npos, e.message.c_str());
        // A million levels: refused at once, no recursion anywhere.
        const size_t depth = 1 << 20;
        auto deep = parseJsonChecked(std::string(depth, '[') + std::string(depth, ']'), JsonLimits{}, "deep");
        QVERIFY(!deep.ok());
        QCOMPARE(deep.error().column, 129);
        QVERIFY(deep.error().param("path").find("... (128 levels)") != std::string::npos);
        // Brackets inside strings do not count.
        QVERIFY(parseJsonChecked("[\"[[[[[[[[\", \"{{{{{{\"]", three, "s").ok());
    }

    void sizeAndValueLimits() {
        JsonLimits small;
        small.maxBytes = 10;
        auto big = parseJsonChecked("[1,2,3,4,5,6]", small, "b");
        QVERIFY(!big.ok());
        QVERIFY(big.error().message.find("more than the limit of 10") != std::string::npos);
        JsonLimits few;
        few.maxValues = 4;
        QVERIFY(parseJsonChecked("[1,2,3]", few, "v").ok());
        auto many = parseJsonChecked("[1,2,3,4]", few, "v");
        QVERIFY(!many.ok());
        QVERIFY(many.error().message.find("more than 4 values") != std::string::npos);
        QCOMPARE(many.error().param("path"), std::string("$[3]"));
    }

    void syntaxErrorsHavePositions() {
        auto r = parseJsonChecked("{\n  \"a\": 1,,\n}", JsonLimits{}, "x.json");
        QVERIFY(!r.ok());
        QCOMPARE(r.error().line, 2);
        QCOMPARE(r.error().column, 10);
        QVERIFY(r.error().message.find("not valid JSON at byte 11") != std::string::npos);
        QVERIFY(!parseJsonChecked("", JsonLimits{}, "e").ok());
        QVERIFY(!parseJsonChecked("[1] [2]", JsonLimits{}, "two").ok());
        auto inf = parseJsonChecked("{\"x\": [1e999]}", JsonLimits{}, "n");
        QVERIFY(!inf.ok());
        QVERIFY2(inf.error().message.find("number overflow parsing '1e999'") != std::string::npos, inf.error().message.c_str());
    }

    void readsFiles() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("a.json").toStdString();
        {
            QFile f(QString::fromStdString(path));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("{\"k\": [1, 2]}");
        }
        auto r = readJsonFileChecked(path);
        QVERIFY(r.ok());
        QCOMPARE(r.value()["k"][1].get<int>(), 2);
        JsonLimits tiny;
        tiny.maxBytes = 4;
        QVERIFY(!readJsonFileChecked(path, tiny).ok());
        auto missing = readJsonFileChecked(dir.filePath("none.json").toStdString());
        QVERIFY(!missing.ok());
        QCOMPARE(errorCodeName(missing.error().code), errorCodeName(ErrorCode::FileNotFound));
    }

    void sha256KnownAnswers() {
        QCOMPARE(sha256Hex(""), std::string("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
        QCOMPARE(sha256Hex("abc"), std::string("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
        QCOMPARE(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
                 std::string("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
        QCOMPARE(sha256Hex(std::string(1000000, 'a')), std::string("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
        // Fed in odd pieces, the digest is the same.
        Sha256 h;
        const std::string text(1000, 'q');
        for (size_t i = 0; i < text.size(); i += 7) h.update(text.data() + i, std::min<size_t>(7, text.size() - i));
        QCOMPARE(h.hexDigest(), sha256Hex(text));
    }
};

QTEST_GUILESS_MAIN(TestJsonChecked)
#include "tst_json_checked.moc"
