// SPDX-License-Identifier: Apache-2.0
// The one-pass :predict reader against the general (JSON tree) parser: the same floats for every
// body both accept, and every body it leaves alone (malformed, too deep, over a budget, NaN, huge
// or long numbers, other forms) answered by parsePredictRequest exactly as the tree parser does.
// kiln-test-libs: kiln_serve kiln_core
#include <QtTest>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "engine/serve/json_tensor.h"
#include "engine/serve/predict_reader.h"
#include "engine/serve/status.h"

using namespace kiln::engine;
using namespace kiln::engine::serve;

namespace {

TensorSpec spec(const std::string& name, std::vector<int64_t> shape) {
    TensorSpec s;
    s.name = name;
    s.shape = std::move(shape);
    return s;
}

ModelSignature imageSig(int64_t h = 2, int64_t w = 3) {
    ModelSignature s;
    s.inputs.push_back(spec("image", {-1, h, w, 1}));
    s.outputs.push_back(spec("logits", {-1, 2}));
    return s;
}

ModelSignature vectorSig(int64_t n) {
    ModelSignature s;
    s.inputs.push_back(spec("x", {-1, n}));
    s.outputs.push_back(spec("y", {-1, 1}));
    return s;
}

// {"instances": [[[a], [b], [c]], [[d], [e], [f]]]}-style body of one 2x3x1 instance per row.
std::string imageBody(const std::vector<std::vector<std::string>>& rows, const char* key = "instances") {
    std::string s = std::string("{\"") + key + "\": [";
    for (size_t r = 0; r < rows.size(); ++r) {
        s += r ? ", [" : "[";
        for (int y = 0; y < 2; ++y) {
            s += y ? ", [" : "[";
            for (int x = 0; x < 3; ++x) s += (x ? ", [" : "[") + rows[r][static_cast<size_t>(y) * 3 + static_cast<size_t>(x)] + "]";
            s += "]";
        }
        s += "]";
    }
    return s + "]}";
}

std::vector<std::string> sixValues(const std::string& v) { return std::vector<std::string>(6, v); }

bool sameBits(const Tensor& a, const Tensor& b) {
    return a.numel() == b.numel() &&
           std::memcmp(a.data<float>(), b.data<float>(), static_cast<size_t>(a.numel()) * sizeof(float)) == 0;
}

// Both parsers on `body`: the reader must decline or agree bit for bit, and parsePredictRequest
// must answer as the tree parser does. Returns whether the reader took the body.
bool compare(const std::string& body, const ModelSignature& sig, const RequestLimits& limits = {}) {
    auto plain = readPlainPredict(body, sig, limits, {});
    auto tree = parsePredictRequestTree(body, sig, limits);
    auto both = parsePredictRequest(body, sig, limits);
    if (plain) {
        if (!plain->ok()) qFatal("the reader failed without an admit function");
        if (!tree.ok()) qFatal("the reader accepted a body the tree parser refuses: %s", tree.error().message.c_str());
        const auto& p = plain->value();
        const auto& t = tree.value();
        if (p.batch != t.batch || p.columnar != t.columnar || !sameBits(p.inputs[0], t.inputs[0]) ||
            p.inputs[0].shape().toString() != t.inputs[0].shape().toString())
            qFatal("the reader and the tree parser disagree on %s", body.c_str());
    }
    if (both.ok() != tree.ok()) qFatal("parsePredictRequest and the tree parser disagree on success");
    if (!both.ok() && both.error().message != tree.error().message) qFatal("different error messages");
    if (both.ok() && !sameBits(both.value().inputs[0], tree.value().inputs[0])) qFatal("different tensors");
    return plain.has_value();
}

std::string errorOf(const std::string& body, const ModelSignature& sig, const RequestLimits& limits = {}) {
    auto r = parsePredictRequest(body, sig, limits);
    return r.ok() ? std::string() : r.error().message;
}

}  // namespace

class TestPredictReader : public QObject {
    Q_OBJECT
private slots:
    void readsThePlainForm() {
        const ModelSignature sig = imageSig();
        const std::string body = imageBody({{"0", "1", "-2", "0.5", "-0.25", "3e2"}, sixValues("7")});
        QVERIFY(compare(body, sig));
        auto r = readPlainPredict(body, sig, {}, {});
        QVERIFY(r && r->ok());
        const auto& req = r->value();
        QCOMPARE(req.batch, int64_t(2));
        QVERIFY(!req.columnar);
        QCOMPARE(QString::fromStdString(req.inputs[0].shape().toString()), QStringLiteral("[2,2,3,1]"));
        const float* v = req.inputs[0].data<float>();
        QCOMPARE(v[0], 0.0f);
        QCOMPARE(v[2], -2.0f);
        QCOMPARE(v[4], -0.25f);
        QCOMPARE(v[5], 300.0f);
        QCOMPARE(v[11], 7.0f);
        // Whitespace anywhere JSON allows it, and the signature name.
        QVERIFY(compare("\n{ \"signature_name\" : \"serving_default\" ,\t\"instances\" :\r\n[ [ 1 , 2 , 3 ] ] } \n",
                        vectorSig(3)));
        QVERIFY(compare(R"({"instances": [[1, 2, 3]], "signature_name": ""})", vectorSig(3)));
    }

    void columnarForm() {
        auto r = readPlainPredict(R"({"inputs": [[1, 2], [3, 4]]})", vectorSig(2), {}, {});
        QVERIFY(r && r->ok());
        QVERIFY(r->value().columnar);
        QCOMPARE(r->value().batch, int64_t(2));
        QVERIFY(compare(R"({"inputs": [[1, 2], [3, 4]]})", vectorSig(2)));
    }

    void exponentForms() {
        for (const char* v : {"1e3", "1E3", "1e+3", "1e-3", "-2.5E-7", "0e0", "0.0e-0", "1.17549435e-38", "3.4028234e38",
                              "1e-45", "1e-50", "-0", "-0.0", "123456789012345678", "0.1", "0.30000001192092896",
                              // around the exact short-cut's limits: 2^53 digits, 10^±22, 19 and 20 digits
                              "9007199254740992e-5", "9007199254740993e-5", "1e22", "1e23", "1.5e-22", "1.5e-23", "4e-22",
                              "0.000000000000000000001", "1234567890123456789e-20", "12345678901234567890e-21",
                              "0.1000000000000000055511151231257827", "-0.000"}) {
            const std::string body = imageBody({sixValues(v)});
            QVERIFY2(compare(body, imageSig()), v);
        }
        auto r = readPlainPredict(imageBody({sixValues("-0.0")}), imageSig(), {}, {});
        QVERIFY(r && r->ok() && std::signbit(r->value().inputs[0].data<float>()[0]));
    }

    void hugeAndLongNumbersGoToTheTreeParser() {
        // Past float's range, past double's, or too many digits for an exact int64: the reader
        // declines and the answer is the tree parser's.
        for (const char* v : {"1e39", "-3.5e38", "3.4028235e38", "1e999", "-1e400", "1234567890123456789", "99999999999999999999999"}) {
            const std::string body = imageBody({sixValues(v)});
            QVERIFY2(!compare(body, imageSig()), v);
        }
        QVERIFY(errorOf(imageBody({sixValues("1e999")}), imageSig()).rfind("JSON Parse error", 0) == 0);
    }

    void nanAndInfinityAreRefused() {
        for (const char* v : {"NaN", "nan", "Infinity", "-Infinity", "inf"}) {
            const std::string body = imageBody({sixValues(v)});
            QVERIFY2(!compare(body, imageSig()), v);
            QVERIFY2(errorOf(body, imageSig()).rfind("JSON Parse error", 0) == 0, v);
        }
    }

    void malformedBodies() {
        const ModelSignature sig = vectorSig(2);
        for (const char* body : {"", "{", "[]", "{}", "null", R"({"instances": [[1, 2],]})", R"({"instances": [[1, 2]]]})",
                                 R"({"instances": [[1, 2]]} x)", R"({"instances": [[01, 2]]})", R"({"instances": [[1., 2]]})",
                                 R"({"instances": [[.5, 2]]})", R"({"instances": [[+1, 2]]})", R"({"instances": [[1e, 2]]})",
                                 R"({"instances": [[1e+, 2]]})", R"({"instances": [[-, 2]]})", R"({"instances": [[1 2]]})",
                                 R"({"instances": [[1, 2]],})", R"({"instances" [[1, 2]]})", R"({'instances': [[1, 2]]})",
                                 R"({"instances": [[1, 2]])", R"({"instances": [[1, 2]]}})",
                                 R"({"instances": []})", R"({"instances": [[1, 2, 3]]})", R"({"instances": [[1]]})",
                                 R"({"instances": [[1, "2"]]})", R"({"instances": [[1, true]]})", R"({"instances": [[1, null]]})",
                                 R"({"instances": [1, 2]})", R"({"instances": [[[1], 2]]})", R"({"instances": {"x": [1, 2]}})",
                                 R"({"instances": [[1, 2]], "inputs": [[1, 2]]})", R"({"instances": [[1, 2]], "instances": [[3, 4]]})",
                                 R"({"instances": [[1, 2]], "signature_name": "other"})", R"({"instances": [[1, 2]], "signature_name": 3})",
                                 R"({"instances": [[1, 2]], "extra": 1})", R"({"inst\u0061nces": [[1, 2]]})",
                                 R"({"instances": [{"x": [1, 2]}]})", R"({"instances": [{"b64": "AAAA"}]})"}) {
            QVERIFY2(!compare(body, sig), body);
        }
        QVERIFY(!compare(std::string("{\"instances\": [[1, 2]]}\0", 24), sig));
        QVERIFY(!compare(std::string("{\"instances\": [[1,\0 2]]}", 24), sig));
        // The tree parser's messages reach the client unchanged.
        QCOMPARE(QString::fromStdString(errorOf(R"({"instances": [[1, 2, 3]]})", sig)),
                 QStringLiteral("instances[0]: input \"x\" expects shape [2] per instance; dimension 0 has 3 values instead of 2"));
        QCOMPARE(QString::fromStdString(errorOf(R"({"instances": [[1, 2]], "signature_name": "other"})", sig)),
                 QStringLiteral("Serving signature name: \"other\" not found in signature def"));
        QVERIFY(errorOf(R"({"instances": [[1, 2],]})", sig).rfind("JSON Parse error", 0) == 0);
        // An escaped key the reader leaves alone is still the same key to the tree parser.
        QVERIFY(errorOf(R"({"inst\u0061nces": [[1, 2]]})", sig).empty());
    }

    void depthLimit() {
        // 2x3x1 items: object, instances list and three item levels make depth 5.
        RequestLimits limits;
        limits.maxJsonDepth = 5;
        const std::string body = imageBody({sixValues("1")});
        QVERIFY(compare(body, imageSig(), limits));
        limits.maxJsonDepth = 4;
        QVERIFY(!compare(body, imageSig(), limits));
        QVERIFY(errorOf(body, imageSig(), limits).find("nested deeper than 4 levels") != std::string::npos);
    }

    void elementBudget() {
        RequestLimits limits;
        limits.maxElements = 12;  // two 2x3x1 instances
        QVERIFY(compare(imageBody({sixValues("1"), sixValues("2")}), imageSig(), limits));
        const std::string three = imageBody({sixValues("1"), sixValues("2"), sixValues("3")});
        QVERIFY(!compare(three, imageSig(), limits));
        QCOMPARE(QString::fromStdString(errorOf(three, imageSig(), limits)),
                 QStringLiteral("the request has 3 instances of 6 input values each, more than the limit of 12 values per request"));
        limits = {};
        limits.maxBatch = 1;
        QVERIFY(!compare(imageBody({sixValues("1"), sixValues("2")}), imageSig(), limits));
        QCOMPARE(QString::fromStdString(errorOf(imageBody({sixValues("1"), sixValues("2")}), imageSig(), limits)),
                 QStringLiteral("more than 1 instances in one request (2)"));
    }

    void admitSeesTheBatchBeforeAllocation() {
        int64_t seen = 0;
        AdmitFn refuse = [&](int64_t batch) -> Status {
            seen = batch;
            return serveError(TfCode::ResourceExhausted, "no room");
        };
        auto r = readPlainPredict(imageBody({sixValues("1"), sixValues("2"), sixValues("3")}), imageSig(), {}, refuse);
        QVERIFY(r && !r->ok());
        QCOMPARE(seen, int64_t(3));
        QCOMPARE(QString::fromStdString(r->error().message), QStringLiteral("no room"));
        // A malformed body never reaches admission.
        seen = 0;
        auto bad = parsePredictRequest(R"({"instances": [[1, 2, 3]]})", vectorSig(2), {}, refuse);
        QVERIFY(!bad.ok());
        QCOMPARE(seen, int64_t(0));
    }

    void modelsOutsideTheFormGoToTheTreeParser() {
        ModelSignature two;
        two.inputs.push_back(spec("a", {-1, 2}));
        two.inputs.push_back(spec("b", {-1, 2}));
        two.outputs.push_back(spec("y", {-1, 1}));
        QVERIFY(!readPlainPredict(R"({"instances": [{"a": [1, 2], "b": [3, 4]}]})", two, {}, {}));
        QVERIFY(parsePredictRequest(R"({"instances": [{"a": [1, 2], "b": [3, 4]}]})", two).ok());
        ModelSignature ints = vectorSig(2);
        ints.inputs[0].dtype = "DT_INT32";
        QVERIFY(!readPlainPredict(R"({"instances": [[1, 2]]})", ints, {}, {}));
    }

    // The reader remembers the first separator of each depth and recognises later ones by their
    // bytes; separators spelt differently later (other spacing, line breaks), and wrong ones that
    // share a prefix with the remembered spelling, are still read or refused token by token.
    void separatorsSpeltDifferently() {
        const ModelSignature sig = imageSig();
        auto body = [](const char* inner, const char* outer, const char* later) {
            // 2x3x1 items: inner separators inside a row, outer between rows; `later` replaces the
            // last inner separator of each row.
            std::string s = R"({"instances": [)";
            for (int item = 0; item < 2; ++item) {
                s += item ? ", [[[" : "[[[";
                for (int y = 0; y < 2; ++y) {
                    if (y) s += outer;
                    for (int x = 0; x < 3; ++x) {
                        if (x) s += x == 2 ? later : inner;
                        s += std::to_string(item * 6 + y * 3 + x) + ".5";
                    }
                }
                s += "]]]";
            }
            return s + "]}";
        };
        QVERIFY(compare(body("], [", "]], [[", "], ["), sig));
        QVERIFY(compare(body("],[", "]],[[", "],["), sig));
        QVERIFY(compare(body("], [", "]],\n  [[", "] ,[ "), sig));
        QVERIFY(compare(body("],\n\t[", "]] , [[", "],\r\n["), sig));
        QVERIFY(compare(body("] , [", "]], [[", "],      ["), sig));
        QVERIFY(!compare(body("], [", "]], [[", "], "), sig));    // a bracket missing
        QVERIFY(!compare(body("], [", "]], [[", "], [["), sig));  // one too many
        QVERIFY(!compare(body("], [", "]], [[", "]; ["), sig));
        QVERIFY(!compare(body("], [", "]], [[", "]], [["), sig));
        QVERIFY(!compare(body("], [", "], [", "], ["), sig));  // a row closed too early
        // Flat items: the separator is the comma alone.
        QVERIFY(compare(R"({"instances": [[1, 2, 3, 4], [5,6,7,8], [9 ,10 , 11,12]]})", vectorSig(4)));
        QVERIFY(!compare(R"({"instances": [[1, 2, 3, 4], [5, 6 7, 8]]})", vectorSig(4)));
    }

    // Digits are read eight at a time where eight bytes remain: every length of integer and
    // fraction part around that width, and numbers ending right at the body's last bytes.
    void digitRunsOfEveryLength() {
        const ModelSignature sig = vectorSig(2);
        std::mt19937 rng(11);
        for (int intLen = 1; intLen <= 20; ++intLen)
            for (int fracLen = 0; fracLen <= 20; ++fracLen) {
                std::string number;
                for (int i = 0; i < intLen; ++i) number += static_cast<char>('0' + (i == 0 ? 1 + rng() % 9 : rng() % 10));
                if (fracLen) {
                    number += '.';
                    for (int i = 0; i < fracLen; ++i) number += static_cast<char>('0' + rng() % 10);
                }
                for (const std::string& n : {number, "-" + number, number + "e-3", "0." + number.substr(0, intLen)}) {
                    const bool taken = compare(R"({"instances": [[)" + n + ", " + n + "]]}", sig);
                    if (intLen + fracLen <= 15) QVERIFY2(taken, n.c_str());  // up to 2^53 in digits
                }
                // The last number of the body with no space after it.
                compare(R"({"instances":[[1,)" + number + "]]}", sig);
            }
        // A digit run that ends in bytes above 0x7F (a carry in the eight-byte test).
        QVERIFY(!compare(std::string(R"({"instances": [[1234567)") + "\xfa\xff" + "89, 2]]}", sig));
        QVERIFY(!compare(std::string(R"({"instances": [[0.1234)") + "\xff\xfa" + "0, 2]]}", sig));
    }

    // Random values written the ways clients write them (shortest, 17 digits, exponent, fixed,
    // integers) read to the same bits by both parsers; the reader takes every one of these bodies.
    void randomNumbersAgreeBitForBit() {
        std::mt19937_64 rng(7);
        std::uniform_real_distribution<double> unit(-1.0, 1.0);
        std::uniform_int_distribution<int> scale(-40, 38);
        const ModelSignature sig = vectorSig(64);
        for (int round = 0; round < 200; ++round) {
            std::string body = "{\"instances\": [[";
            for (int i = 0; i < 64; ++i) {
                const double x = unit(rng) * std::pow(10.0, scale(rng));
                char buf[64];
                switch (i % 5) {
                case 0: {
                    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<float>(x));
                    *end = 0;
                    break;
                }
                case 1: std::snprintf(buf, sizeof buf, "%.17g", x); break;
                case 2: std::snprintf(buf, sizeof buf, "%.9E", x); break;
                case 3: std::snprintf(buf, sizeof buf, "%.6f", std::fmod(x, 1e6)); break;
                default: std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(std::fmod(x, 1e15))); break;
                }
                body += (i ? ", " : "") + std::string(buf);
            }
            body += "]]}";
            QVERIFY2(compare(body, sig), body.c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestPredictReader)
#include "tst_predict_reader.moc"
