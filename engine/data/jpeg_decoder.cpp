// SPDX-License-Identifier: Apache-2.0
// libjpeg region and DCT-scaled decoding. libjpeg reports fatal errors through error_exit, which
// must not return: it longjmps back to the setjmp of the call in progress. Every function that
// calls setjmp holds only trivially destructible locals, so the jump skips no destructor.
#include "engine/data/jpeg_decoder.h"

#include <algorithm>
#include <atomic>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <vector>

#include <jpeglib.h>

#include "engine/data/sample.h"

namespace kiln::engine::data {

namespace {

std::atomic<int64_t> g_cropped{0}, g_fallback{0};
std::atomic<int64_t> g_scaled[3] = {0, 0, 0};  // by 1/2, 1/4, 1/8

struct ErrorManager {
    jpeg_error_mgr base;  // first member: libjpeg hands back a pointer to it
    std::jmp_buf jump;
    int warnings = 0;
};

[[noreturn]] void onError(j_common_ptr cinfo) {
    auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
    std::longjmp(err->jump, 1);
}

// Warnings (corrupt data that libjpeg papers over) are counted, not printed: any warning sends the
// picture to the general path, which reports it as it always did.
void onMessage(j_common_ptr cinfo, int level) {
    if (level < 0) ++reinterpret_cast<ErrorManager*>(cinfo->err)->warnings;
}

void onOutput(j_common_ptr) {}

}  // namespace

struct JpegRegionDecoder::State {
    jpeg_decompress_struct cinfo;
    ErrorManager err;
    bool created = false;
    bool headerRead = false;
    std::vector<uint8_t> row;  // one decoded row of the widened region

    // The steps below run under setjmp; they return false on a libjpeg error or warning.
    bool readHeader(const uint8_t* data, size_t size) {
        if (setjmp(err.jump)) return false;
        jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(size));
        if (jpeg_read_header(&cinfo, TRUE) != JPEG_HEADER_OK) return false;
        return err.warnings == 0;
    }

    bool start(unsigned denom) {
        if (setjmp(err.jump)) return false;
        cinfo.out_color_space = cinfo.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
        cinfo.scale_num = 1;
        cinfo.scale_denom = denom;
        // libjpeg's defaults, which OpenCV keeps as well; set so that the two decodes agree.
        cinfo.dct_method = JDCT_ISLOW;
        cinfo.do_fancy_upsampling = TRUE;
        cinfo.do_block_smoothing = TRUE;
        jpeg_start_decompress(&cinfo);
        return err.warnings == 0;
    }

    bool crop(JDIMENSION* xoffset, JDIMENSION* width) {
        if (setjmp(err.jump)) return false;
        jpeg_crop_scanline(&cinfo, xoffset, width);
        return err.warnings == 0;
    }

    bool skip(JDIMENSION rows) {
        if (setjmp(err.jump)) return false;
        return jpeg_skip_scanlines(&cinfo, rows) == rows && err.warnings == 0;
    }

    // Reads `rows` rows; row r goes to dst + r * stride, columns [first, first + bytes) of it.
    bool read(uint8_t* dst, size_t stride, int rows, size_t first, size_t bytes) {
        if (setjmp(err.jump)) return false;
        for (int r = 0; r < rows; ++r) {
            JSAMPROW p = row.data();
            if (jpeg_read_scanlines(&cinfo, &p, 1) != 1) return false;
            std::memcpy(dst + static_cast<size_t>(r) * stride, row.data() + first, bytes);
        }
        return err.warnings == 0;
    }

    // Reads every output row straight into dst.
    bool readAll(uint8_t* dst, size_t stride) {
        if (setjmp(err.jump)) return false;
        while (cinfo.output_scanline < cinfo.output_height) {
            JSAMPROW p = dst + static_cast<size_t>(cinfo.output_scanline) * stride;
            if (jpeg_read_scanlines(&cinfo, &p, 1) != 1) return false;
        }
        return err.warnings == 0;
    }

    // Entropy-decodes the rows below the region and reads the markers after the image, as a full
    // decode does, so that damage anywhere in the file still sends it to the general path. The
    // rows are skipped (no inverse DCT) except the last one: a skip that reaches the end of the
    // image returns without reading the data, a read of the last row has to.
    bool complete() {
        if (setjmp(err.jump)) return false;
        const JDIMENSION rest = cinfo.output_height - cinfo.output_scanline;
        if (rest > 1 && jpeg_skip_scanlines(&cinfo, rest - 1) != rest - 1) return false;
        if (rest > 0) {
            JSAMPROW p = row.data();
            if (jpeg_read_scanlines(&cinfo, &p, 1) != 1) return false;
        }
        jpeg_finish_decompress(&cinfo);
        return err.warnings == 0;
    }

    // Back to the state after jpeg_create_decompress, ready for another header.
    void reset() {
        if (setjmp(err.jump)) return;
        jpeg_abort_decompress(&cinfo);
    }
};

JpegRegionDecoder::JpegRegionDecoder() : m_state(std::make_unique<State>()) {
    State& s = *m_state;
    std::memset(&s.cinfo, 0, sizeof(s.cinfo));
    s.cinfo.err = jpeg_std_error(&s.err.base);
    s.err.base.error_exit = onError;
    s.err.base.emit_message = onMessage;
    s.err.base.output_message = onOutput;
}

JpegRegionDecoder::~JpegRegionDecoder() {
    if (m_state->created) jpeg_destroy_decompress(&m_state->cinfo);
}

namespace {

// jpeg_create_decompress under its own setjmp (it fails only when out of memory).
bool create(jpeg_decompress_struct* cinfo, ErrorManager* err) {
    if (setjmp(err->jump)) return false;
    jpeg_create_decompress(cinfo);
    return true;
}

}  // namespace

bool JpegRegionDecoder::open(const std::string& bytes) {
    State& s = *m_state;
    if (bytes.size() < 3 || std::memcmp(bytes.data(), "\xFF\xD8\xFF", 3) != 0) return false;
    // A file cut short may still hold every row a crop needs; decodeImage reports it as bad.
    if (!jpegComplete(bytes)) {
        ++g_fallback;
        return false;
    }
    if (!s.created) {
        if (!create(&s.cinfo, &s.err)) {
            ++g_fallback;
            return false;
        }
        s.created = true;
    } else {
        s.reset();
    }
    s.err.warnings = 0;
    s.headerRead = s.readHeader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    // 8-bit grey or three-component colour only: OpenCV turns CMYK/YCCK into RGB its own way.
    const bool supported = s.headerRead && s.cinfo.data_precision == 8 &&
                           (s.cinfo.num_components == 1 ||
                            (s.cinfo.num_components == 3 &&
                             (s.cinfo.jpeg_color_space == JCS_YCbCr || s.cinfo.jpeg_color_space == JCS_RGB)));
    if (!supported) {
        s.headerRead = false;
        ++g_fallback;
    }
    return supported;
}

int JpegRegionDecoder::width() const {
    return static_cast<int>(m_state->cinfo.image_width);
}

int JpegRegionDecoder::height() const {
    return static_cast<int>(m_state->cinfo.image_height);
}

cv::Size JpegRegionDecoder::scaledSize(int denom) const {
    return cv::Size((width() + denom - 1) / denom, (height() + denom - 1) / denom);
}

bool JpegRegionDecoder::decodeRegion(const cv::Rect& region, cv::Mat& out) {
    State& s = *m_state;
    if (!s.headerRead || region.width <= 0 || region.height <= 0 || region.x < 0 || region.y < 0 ||
        region.x + region.width > width() || region.y + region.height > height())
        return false;
    s.headerRead = false;  // one decode per header
    const int channels = s.cinfo.num_components == 1 ? 1 : 3;
    bool ok = s.start(1);
    // The widened region: one more pixel each side (libjpeg aligns the left edge further down to
    // an iMCU boundary and reports where it put it).
    const int left = std::max(0, region.x - 1);
    const int right = std::min(width(), region.x + region.width + 1);
    JDIMENSION xoffset = static_cast<JDIMENSION>(left), cropWidth = static_cast<JDIMENSION>(right - left);
    if (ok && (left > 0 || right < width())) ok = s.crop(&xoffset, &cropWidth);
    if (ok) ok = s.skip(static_cast<JDIMENSION>(region.y));
    if (ok) {
        s.row.resize(static_cast<size_t>(cropWidth) * static_cast<size_t>(channels));
        out.create(region.height, region.width, CV_8UC(channels));
        const size_t first = static_cast<size_t>(region.x - static_cast<int>(xoffset)) * channels;
        ok = s.read(out.data, out.step[0], region.height, first,
                    static_cast<size_t>(region.width) * channels) &&
             s.complete();
    }
    s.reset();
    if (ok)
        ++g_cropped;
    else {
        out.release();
        ++g_fallback;
    }
    return ok;
}

bool JpegRegionDecoder::decodeScaled(int denom, cv::Mat& out) {
    State& s = *m_state;
    if (!s.headerRead || (denom != 2 && denom != 4 && denom != 8)) return false;
    s.headerRead = false;
    const int channels = s.cinfo.num_components == 1 ? 1 : 3;
    bool ok = s.start(static_cast<unsigned>(denom));
    if (ok) {
        out.create(static_cast<int>(s.cinfo.output_height), static_cast<int>(s.cinfo.output_width),
                   CV_8UC(channels));
        ok = s.readAll(out.data, out.step[0]) && s.complete();
    }
    s.reset();
    if (ok)
        ++g_scaled[denom == 2 ? 0 : denom == 4 ? 1 : 2];
    else {
        out.release();
        ++g_fallback;
    }
    return ok;
}

JpegPathCounts jpegPathCounts() {
    JpegPathCounts c;
    c.cropped = g_cropped.load();
    c.scaledHalf = g_scaled[0].load();
    c.scaledQuarter = g_scaled[1].load();
    c.scaledEighth = g_scaled[2].load();
    c.fallback = g_fallback.load();
    return c;
}

}  // namespace kiln::engine::data
