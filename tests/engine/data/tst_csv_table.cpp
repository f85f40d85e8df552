// kiln-test-libs: kiln_data
// SPDX-License-Identifier: Apache-2.0
// CSV table reader: quoting, CRLF, headers, skipped rows, one-hot columns, column groups,
// error positions and messages, other rows read with a table's layout, and the real
// scikit-learn tables when they are cached.
#include <QtTest>

#include <zlib.h>

#include <QTemporaryDir>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/data/csv_table.h"

using namespace kiln::engine;
using namespace kiln::engine::data;

namespace {

std::string dataDir() {
    if (const char* env = std::getenv("KILN_DATA"); env != nullptr && *env != '\0') return env;
    const char* home = std::getenv("HOME");
    return std::string(home != nullptr ? home : "") + "/.cache/kiln/data";
}

std::vector<float> floats(std::initializer_list<float> v) {
    return v;
}

}  // namespace

class TestCsvTable : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    int m_files = 0;

    // Writes `text` to a new file and returns its path.
    std::string write(const std::string& text, const char* suffix = ".csv") {
        std::string path = m_dir.filePath(QString("t%1%2").arg(++m_files).arg(suffix)).toStdString();
        if (std::string(suffix).ends_with(".gz")) {
            gzFile f = gzopen(path.c_str(), "wb");
            gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
            gzclose(f);
        } else {
            std::ofstream(path, std::ios::binary) << text;
        }
        return path;
    }

    static std::string why(const Result<InMemoryDataset>& r) { return r.ok() ? "" : r.error().toString(); }

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void plainNumbers() {
        auto set = readCsvTable(write("1,2,0\n3.5,-4e-1,1\n+5, 6 ,1\n"));
        QVERIFY2(set.ok(), why(set).c_str());
        QCOMPARE(set->count(), int64_t{3});
        const Column* f = set->column("features");
        QVERIFY(f != nullptr);
        QCOMPARE(f->sampleShape, Shape{2});
        QCOMPARE(f->values, floats({1, 2, 3.5f, -0.4f, 5, 6}));
        QCOMPARE(f->elementNames, (std::vector<std::string>{"column 1", "column 2"}));
        const Column* l = set->column("label");
        QCOMPARE(l->sampleShape, Shape{});
        QCOMPARE(l->values, floats({0, 1, 1}));
        // Features first, then the label.
        QCOMPARE(set->columnData()[0].name, std::string("features"));
        QCOMPARE(set->columnData()[1].name, std::string("label"));
    }

    void skipRowsAndHeader() {
        // The scikit-learn layout: a summary line, no header.
        auto sk = readCsvTable(write("2,2,no,yes\n0.5,1.5,1\n2.5,3.5,0\n"), {.skipRows = 1});
        QVERIFY2(sk.ok(), why(sk).c_str());
        QCOMPARE(sk->count(), int64_t{2});
        QCOMPARE(sk->column("label")->values, floats({1, 0}));

        // A header, with the label named and placed first.
        CsvTableOptions o;
        o.hasHeader = true;
        o.labelColumn = "kind";
        auto h = readCsvTable(write("kind,width,height\n1,10,20\n0,30,40\n"), o);
        QVERIFY2(h.ok(), why(h).c_str());
        QCOMPARE(h->column("features")->elementNames, (std::vector<std::string>{"width", "height"}));
        QCOMPARE(h->column("features")->values, floats({10, 20, 30, 40}));
        QCOMPARE(h->column("label")->values, floats({1, 0}));

        // The label by position from the front and from the end.
        o.labelColumn = 0;
        auto h0 = readCsvTable(write("kind,width,height\n1,10,20\n"), o);
        QVERIFY(h0.ok());
        QCOMPARE(h0->column("label")->values, floats({1}));
        o.labelColumn = -2;
        auto h2 = readCsvTable(write("kind,width,height\n1,10,20\n"), o);
        QVERIFY(h2.ok());
        QCOMPARE(h2->column("label")->values, floats({10}));
        QCOMPARE(h2->column("features")->values, floats({1, 20}));

        // No label at all.
        o.labelColumn = std::nullopt;
        auto none = readCsvTable(write("a,b\n1,2\n"), o);
        QVERIFY(none.ok());
        QVERIFY(none->column("label") == nullptr);
        QCOMPARE(none->column("features")->values, floats({1, 2}));
    }

    void quotesCrlfAndBlankLines() {
        // A byte order mark, CRLF ends, quoted numbers and text, doubled quotes, a delimiter and
        // a line break inside quotes, a blank line in the middle and an empty last line.
        const std::string text =
            "\xEF\xBB\xBF"
            "name,value,label\r\n"
            "\"plain\",\"1.5\",0\r\n"
            "\r\n"
            "\"with, comma\",2,1\r\n"
            "\"say \"\"hi\"\"\", 3 ,0\r\n"
            "\"two\r\nlines\",4,1\r\n"
            "\r\n";
        CsvTableOptions o;
        o.hasHeader = true;
        o.categoricalColumns = {"name"};
        auto set = readCsvTable(write(text), o);
        QVERIFY2(set.ok(), why(set).c_str());
        QCOMPARE(set->count(), int64_t{4});
        const Column* f = set->column("features");
        // Categories sorted: plain, say "hi", two\nlines, with, comma.
        QCOMPARE(f->elementNames, (std::vector<std::string>{"name=plain", "name=say \"hi\"",
                                                            "name=two\nlines", "name=with, comma", "value"}));
        QCOMPARE(f->values, floats({1, 0, 0, 0, 1.5f,  //
                                    0, 0, 0, 1, 2,     //
                                    0, 1, 0, 0, 3,     //
                                    0, 0, 1, 0, 4}));
        QCOMPARE(set->column("label")->values, floats({0, 1, 0, 1}));

        // Error lines count physical lines, including those inside quotes and the skipped ones.
        auto bad = readCsvTable(write("\"a\nb\",1\r\n\"c\",x\r\n"),
                                {.labelColumn = std::nullopt, .categoricalColumns = {0}});
        QVERIFY(!bad.ok());
        QCOMPARE(bad.error().line, 3);
        QCOMPARE(bad.error().column, 2);

        // Only a trailing line without a line end.
        auto noEol = readCsvTable(write("1,2\n3,4"));
        QVERIFY(noEol.ok());
        QCOMPARE(noEol->count(), int64_t{2});
    }

    // Every row remembers the line where it starts (1-based, counting the skipped line, the
    // header, blank lines and lines inside quotes), and a subset keeps each line with its sample.
    void sourceLines() {
        const std::string text =
            "summary line\n"
            "name,value,label\n"
            "a,1,0\n"
            "\n"
            "\"two\nlines\",2,1\n"
            "c,3,0\n"
            "\r\n"
            "d,4,1\n";
        CsvTableOptions o;
        o.skipRows = 1;
        o.hasHeader = true;
        o.categoricalColumns = {"name"};
        const std::string path = write(text);
        auto set = readCsvTable(path, o);
        QVERIFY2(set.ok(), why(set).c_str());
        QCOMPARE(set->count(), int64_t{4});
        QVERIFY(set->hasSourceLines());
        QCOMPARE(set->sourceFile(), path);
        QCOMPARE(set->sourceLine(0), int64_t{3});
        QCOMPARE(set->sourceLine(1), int64_t{5});
        QCOMPARE(set->sourceLine(2), int64_t{7});
        QCOMPARE(set->sourceLine(3), int64_t{9});
        QCOMPARE(set->sourceLine(4), int64_t{0});  // no such sample
        QCOMPARE(set->sourceOf(2), path + ":7");

        const std::vector<int64_t> picked = {3, 0, 2};
        auto part = set->subset(picked);
        QVERIFY(part.ok());
        QCOMPARE(part->sourceOf(0), path + ":9");
        QCOMPARE(part->sourceOf(1), path + ":3");
        QCOMPARE(part->sourceOf(2), path + ":7");
        // The values travel with their lines: the value column of line 9 is 4.
        QCOMPARE(part->column("features")->sample(0).back(), 4.0f);
        QCOMPARE(part->column("label")->values, floats({1, 0, 0}));

        // A gzip-compressed table counts the lines of its text.
        const std::string gz = write("1,2,0\n\n3,4,1\n", ".csv.gz");
        auto packed = readCsvTable(gz);
        QVERIFY2(packed.ok(), why(packed).c_str());
        QCOMPARE(packed->sourceOf(1), gz + ":3");

        // Lines are one per sample or refused; a data set built from columns has none.
        InMemoryDataset plain(2);
        QVERIFY(!plain.hasSourceLines());
        QCOMPARE(plain.sourceOf(0), std::string());
        QVERIFY(!plain.setSourceLines("x.csv", {1}).ok());
        QVERIFY(plain.setSourceLines("x.csv", {4, 2}).ok());
        QCOMPARE(plain.sourceOf(1), std::string("x.csv:2"));
    }

    void categoricalOneHot() {
        CsvTableOptions o;
        o.categoricalColumns = {1, 2};
        auto set = readCsvTable(write("1,red,10,0\n2,green,2,1\n3,blue,1,1\n4,red,2,0\n"), o);
        QVERIFY2(set.ok(), why(set).c_str());
        const Column* f = set->column("features");
        // column 1 | blue green red | 1 2 10 (numeric categories sort as numbers)
        QCOMPARE(f->sampleShape, Shape{7});
        QCOMPARE(f->elementNames,
                 (std::vector<std::string>{"column 1", "column 2=blue", "column 2=green", "column 2=red",
                                           "column 3=1", "column 3=2", "column 3=10"}));
        // Each element's file column and category, for showing a sample as the file holds it.
        QCOMPARE(f->elementColumns, (std::vector<int64_t>{0, 1, 1, 1, 2, 2, 2}));
        QCOMPARE(f->elementCategories, (std::vector<std::string>{"", "blue", "green", "red", "1", "2", "10"}));
        auto part = set->subset(std::vector<int64_t>{0});
        QVERIFY(part.ok());
        QCOMPARE(part->column("features")->elementCategories, f->elementCategories);
        QCOMPARE(f->values, floats({1, 0, 0, 1, 0, 0, 1,  //
                                    2, 0, 1, 0, 0, 1, 0,  //
                                    3, 1, 0, 0, 1, 0, 0,  //
                                    4, 0, 0, 1, 0, 1, 0}));

        // Class names as labels.
        CsvTableOptions named;
        named.categoricalLabel = true;
        auto iris = readCsvTable(write("5.1,virginica\n4.9,setosa\n6.0,versicolor\n5.0,setosa\n"), named);
        QVERIFY2(iris.ok(), why(iris).c_str());
        QCOMPARE(iris->column("label")->classNames,
                 (std::vector<std::string>{"setosa", "versicolor", "virginica"}));
        QCOMPARE(iris->column("label")->values, floats({2, 0, 1, 0}));
    }

    // Other rows read with the layout of a table: the same elements and categories, columns found
    // by header name (in another order, with extra columns, without the label), or by position
    // (with or without the label column); bad rows name the file, line and column.
    void otherRowsByLayout() {
        CsvTableOptions o;
        o.hasHeader = true;
        o.labelColumn = "label";
        o.categoricalColumns = {"shade", "size"};
        CsvTableLayout layout;
        auto set = readCsvTable(write("id,shade,size,w,label\n1,red,10,0.5,0\n2,blue,2,1.5,1\n3,red,1,2.5,1\n"), o, &layout);
        QVERIFY2(set.ok(), why(set).c_str());
        QCOMPARE(layout.width, int64_t{5});
        QCOMPARE(layout.labelColumn, int64_t{4});
        QCOMPARE(layout.categories.at(2), (std::vector<std::string>{"1", "2", "10"}));
        const Column* f = set->column("features");

        // Another order, an extra column, no label; "10.0" is the category "10".
        auto rows = readCsvRows(write("w,note,size,shade,id\n7.5,x,10.0,blue,9\n0.25,y,2,red,8\n"), o, layout, false);
        QVERIFY2(rows.ok(), why(rows).c_str());
        QVERIFY(rows->column("label") == nullptr);
        const Column* g = rows->column("features");
        QCOMPARE(g->elementNames, f->elementNames);
        QCOMPARE(g->elementCategories, f->elementCategories);
        // id | shade=blue shade=red | size=1 size=2 size=10 | w
        QCOMPARE(g->values, floats({9, 1, 0, 0, 0, 1, 7.5f,  //
                                    8, 0, 1, 0, 1, 0, 0.25f}));
        QCOMPARE(rows->sourceLine(1), int64_t{3});

        // The label is required for evaluation: named in the message, the header's line.
        const std::string unlabelled = write("id,shade,size,w\n1,red,1,0\n");
        auto noLabel = readCsvRows(unlabelled, o, layout, true);
        QVERIFY(!noLabel.ok());
        QCOMPARE(noLabel.error().code, ErrorCode::ParseError);
        QCOMPARE(noLabel.error().file, unlabelled);
        QCOMPARE(noLabel.error().line, 1);
        QVERIFY2(noLabel.error().message.find("\"label\"") != std::string::npos, noLabel.error().message.c_str());
        QCOMPARE(noLabel.error().param("reason"), std::string("missing label column"));

        // A feature column that is missing.
        auto noShade = readCsvRows(write("id,size,w,label\n1,1,0,1\n"), o, layout, false);
        QVERIFY(!noShade.ok());
        QCOMPARE(noShade.error().line, 1);
        QCOMPARE(noShade.error().param("column_name"), std::string("shade"));
        QVERIFY2(noShade.error().message.find("\"shade\", which the model reads") != std::string::npos,
                 noShade.error().message.c_str());

        // A category the table does not have: the value, the column and the known categories.
        const std::string green = write("id,shade,size,w,label\n1,red,1,0,1\n2,green,1,0,1\n");
        auto unknown = readCsvRows(green, o, layout, true);
        QVERIFY(!unknown.ok());
        QCOMPARE(unknown.error().line, 3);
        QCOMPARE(unknown.error().column, 2);
        QCOMPARE(unknown.error().param("value"), std::string("green"));
        QCOMPARE(unknown.error().param("reason"), std::string("unknown category"));
        QVERIFY2(unknown.error().message.find("Column 2 (\"shade\"): \"green\"") != std::string::npos &&
                     unknown.error().message.find("(blue, red)") != std::string::npos,
                 unknown.error().message.c_str());

        // A number column holding text.
        auto text = readCsvRows(write("id,shade,size,w,label\n1,red,1,heavy,1\n"), o, layout, true);
        QVERIFY(!text.ok());
        QCOMPARE(text.error().line, 2);
        QCOMPARE(text.error().column, 4);
        QCOMPARE(text.error().param("reason"), std::string("not a number"));

        // Without a header: the table's columns, or all but the label (here the first column).
        CsvTableOptions p;
        p.labelColumn = 0;
        CsvTableLayout plain;
        QVERIFY(readCsvTable(write("0,1,2\n1,3,4\n"), p, &plain).ok());
        auto full = readCsvRows(write("1,5,6\n"), p, plain, true);
        QVERIFY2(full.ok(), why(full).c_str());
        QCOMPARE(full->column("features")->values, floats({5, 6}));
        QCOMPARE(full->column("label")->values, floats({1}));
        auto bare = readCsvRows(write("5,6\n7,8\n"), p, plain, false);
        QVERIFY2(bare.ok(), why(bare).c_str());
        QCOMPARE(bare->column("features")->values, floats({5, 6, 7, 8}));
        QVERIFY(bare->column("label") == nullptr);
        QVERIFY(!readCsvRows(write("5,6\n"), p, plain, true).ok());
        auto wide = readCsvRows(write("5,6,7,8\n"), p, plain, false);
        QVERIFY(!wide.ok());
        QCOMPARE(wide.error().param("reason"), std::string("column count"));
    }

    void columnGroups() {
        std::string text;
        for (int r = 0; r < 3; ++r) {
            for (int c = 0; c < 6; ++c) text += std::to_string(r * 10 + c) + ",";
            text += std::to_string(r % 2) + "\n";
        }
        CsvTableOptions o;
        o.groups = {CsvColumnGroup::range("tower_a", 0, 3), CsvColumnGroup::range("tower_b", 3, 6)};
        auto set = readCsvTable(write(text), o);
        QVERIFY2(set.ok(), why(set).c_str());
        QCOMPARE(set->columnData().size(), size_t{3});
        QVERIFY(set->column("features") == nullptr);
        QCOMPARE(set->column("tower_a")->sampleShape, Shape{3});
        QCOMPARE(set->column("tower_a")->values, floats({0, 1, 2, 10, 11, 12, 20, 21, 22}));
        QCOMPARE(set->column("tower_b")->values, floats({3, 4, 5, 13, 14, 15, 23, 24, 25}));
        QCOMPARE(set->column("label")->values, floats({0, 1, 0}));

        // Groups by name, in any order; unlisted columns are dropped.
        CsvTableOptions byName;
        byName.hasHeader = true;
        byName.groups = {{"wide", {"c", "a"}}};
        auto named = readCsvTable(write("a,b,c,y\n1,2,3,0\n4,5,6,1\n"), byName);
        QVERIFY2(named.ok(), why(named).c_str());
        QCOMPARE(named->column("wide")->values, floats({3, 1, 6, 4}));

        // Ignored columns leave the default group.
        CsvTableOptions ignore;
        ignore.ignoredColumns = {0};
        auto ig = readCsvTable(write("101,2,3,0\n102,5,6,1\n"), ignore);
        QVERIFY(ig.ok());
        QCOMPARE(ig->column("features")->values, floats({2, 3, 5, 6}));

        // The label may not be an input.
        CsvTableOptions clash;
        clash.groups = {CsvColumnGroup::range("all", 0, 7)};
        auto bad = readCsvTable(write(text), clash);
        QVERIFY(!bad.ok());
        QCOMPARE(bad.error().code, ErrorCode::InvalidArgument);
        QVERIFY(bad.error().message.find("label") != std::string::npos);
    }

    void errorMessages() {
        // Line 17 of the file (one skipped line, 15 good rows), column 4.
        std::string text = "16,4,a,b\n";
        for (int r = 0; r < 15; ++r) text += "1,2,3,4,0\n";
        text += "1,2,3,abc,1\n";
        const std::string path = write(text);
        auto set = readCsvTable(path, {.skipRows = 1});
        QVERIFY(!set.ok());
        const Error& e = set.error();
        QCOMPARE(e.code, ErrorCode::ParseError);
        QCOMPARE(e.file, path);
        QCOMPARE(e.line, 17);
        QCOMPARE(e.column, 4);
        QVERIFY2(e.message.find("Column 4: \"abc\" is not a number") != std::string::npos, e.message.c_str());
        QVERIFY2(e.toString().starts_with(path + ":17:4: "), e.toString().c_str());
        QCOMPARE(e.param("reason"), std::string("not a number"));

        // The header name is part of the message when there is one.
        CsvTableOptions h;
        h.hasHeader = true;
        auto named = readCsvTable(write("x,area,y\n1,2,0\n1,?,1\n"), h);
        QVERIFY(!named.ok());
        QVERIFY2(
            named.error().message.find("Column 2 (\"area\"): \"?\" is not a number") != std::string::npos,
            named.error().message.c_str());
        QCOMPARE(named.error().line, 3);

        // Empty cells: an error, or NaN on request.
        auto empty = readCsvTable(write("1,2,0\n1,,1\n"));
        QVERIFY(!empty.ok());
        QCOMPARE(empty.error().line, 2);
        QCOMPARE(empty.error().column, 2);
        QVERIFY(empty.error().message.find("empty") != std::string::npos);
        CsvTableOptions missing;
        missing.allowMissing = true;
        auto nan = readCsvTable(write("1,2,0\n1,,1\n"), missing);
        QVERIFY(nan.ok());
        QVERIFY(std::isnan(nan->column("features")->values[3]));

        // Ragged rows.
        auto ragged = readCsvTable(write("1,2,0\n1,2,3,1\n"));
        QVERIFY(!ragged.ok());
        QCOMPARE(ragged.error().line, 2);
        QVERIFY2(ragged.error().message.find("Expected 3 columns, found 4") != std::string::npos,
                 ragged.error().message.c_str());

        // A label that is a name without categoricalLabel.
        auto label = readCsvTable(write("1,2,cat\n"));
        QVERIFY(!label.ok());
        QCOMPARE(label.error().column, 3);
        QVERIFY(label.error().message.find("\"cat\" is not a number") != std::string::npos);

        // An unterminated quote names the line it starts on.
        auto quote = readCsvTable(write("1,2,0\n1,\"2,0\n3,4,5\n"));
        QVERIFY(!quote.ok());
        QCOMPARE(quote.error().code, ErrorCode::ParseError);
        QCOMPARE(quote.error().line, 2);

        // Option mistakes.
        auto unknown = readCsvTable(write("a,b\n1,2\n"), {.hasHeader = true, .labelColumn = "nope"});
        QVERIFY(!unknown.ok());
        QCOMPARE(unknown.error().code, ErrorCode::InvalidArgument);
        QVERIFY(unknown.error().message.find("\"nope\"") != std::string::npos);
        auto noHeader = readCsvTable(write("1,2\n"), {.labelColumn = "y"});
        QVERIFY(!noHeader.ok());
        auto far = readCsvTable(write("1,2\n"), {.labelColumn = 5});
        QVERIFY(!far.ok());
        QVERIFY(far.error().message.find("has 2 columns") != std::string::npos);

        // Missing and empty files.
        auto gone = readCsvTable(m_dir.filePath("missing.csv").toStdString());
        QVERIFY(!gone.ok());
        QCOMPARE(gone.error().code, ErrorCode::FileNotFound);
        auto nothing = readCsvTable(write("\n\n"));
        QVERIFY(!nothing.ok());
        QCOMPARE(nothing.error().code, ErrorCode::DataError);
    }

    void gzipped() {
        auto set = readCsvTable(write("1,2,0\n3,4,1\n", ".csv.gz"));
        QVERIFY2(set.ok(), why(set).c_str());
        QCOMPARE(set->column("features")->values, floats({1, 2, 3, 4}));
    }

    void realBreastCancer() {
        const std::string path = dataDir() + "/sklearn/breast_cancer.csv";
        if (!std::filesystem::exists(path))
            QSKIP("breast_cancer.csv is not cached (run tools/fetch_data.sh)");
        auto set = readCsvTable(path, {.skipRows = 1});
        QVERIFY2(set.ok(), why(set).c_str());
        QCOMPARE(set->count(), int64_t{569});
        QCOMPARE(set->column("features")->sampleShape, Shape{30});
        QCOMPARE(set->column("features")->values[0], 17.99f);
        auto counts = classCounts(*set->column("label"));
        QVERIFY(counts.ok());
        QCOMPARE(*counts, (std::vector<int64_t>{212, 357}));

        // Two towers of 15 measurements each.
        CsvTableOptions towers;
        towers.skipRows = 1;
        towers.groups = {CsvColumnGroup::range("tower_a", 0, 15), CsvColumnGroup::range("tower_b", 15, 30)};
        auto two = readCsvTable(path, towers);
        QVERIFY2(two.ok(), why(two).c_str());
        QCOMPARE(two->column("tower_b")->sampleShape, Shape{15});
        QCOMPARE(two->column("tower_b")->values[5], set->column("features")->values[20]);
    }

    void realOtherTables() {
        const std::string dir = dataDir() + "/sklearn";
        if (!std::filesystem::exists(dir + "/iris.csv")) QSKIP("the sklearn tables are not cached");
        struct Case {
            const char* file;
            int skip;
            int64_t rows;
            int64_t features;
            std::vector<int64_t> counts;
        };
        const Case cases[] = {
            {"iris.csv", 1, 150, 4, {50, 50, 50}},
            {"wine_data.csv", 1, 178, 13, {59, 71, 48}},
            {"digits.csv.gz", 0, 1797, 64, {178, 182, 177, 183, 181, 182, 181, 179, 174, 180}},
        };
        for (const Case& c : cases) {
            auto set = readCsvTable(dir + "/" + c.file, {.skipRows = c.skip});
            QVERIFY2(set.ok(), why(set).c_str());
            QCOMPARE(set->count(), c.rows);
            QCOMPARE(set->column("features")->sampleShape, Shape{c.features});
            auto counts = classCounts(*set->column("label"));
            QVERIFY(counts.ok());
            QCOMPARE(*counts, c.counts);
        }
    }
};

QTEST_APPLESS_MAIN(TestCsvTable)
#include "tst_csv_table.moc"
