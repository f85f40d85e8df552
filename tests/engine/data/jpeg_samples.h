// SPDX-License-Identifier: Apache-2.0
// Real JPEG files for the data tests: photo-like pictures (smooth colour fields, grain, discs)
// encoded by OpenCV (4:2:0, optionally progressive) or by libjpeg directly where OpenCV 4.6 has
// no setting for it (4:4:4 and 4:2:2 chroma, restart markers, CMYK).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <jpeglib.h>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "engine/core/rng.h"

namespace kiln::test {

// width x height, RGB (channels 3) or grey (1), 8-bit; the same for the same seed.
inline cv::Mat photoLike(int width, int height, int channels, uint64_t seed, int grain = 24) {
    cv::Mat small(5, 7, CV_8UC3);
    for (int k = 0; k < 5 * 7 * 3; ++k)
        small.data[k] = static_cast<uchar>(engine::rng::bits(seed, 1, static_cast<uint64_t>(k)) & 0xFF);
    cv::Mat img;
    cv::resize(small, img, cv::Size(width, height), 0, 0, cv::INTER_CUBIC);
    cv::Mat noise(height, width, CV_8UC3);
    cv::RNG rng(seed + 1);
    rng.fill(noise, cv::RNG::UNIFORM, 0, grain + 1);
    img += noise;
    for (int s = 0; s < 6; ++s) {
        const auto r = [&](int k, int mod) {
            return static_cast<int>(engine::rng::bits(seed, 2, static_cast<uint64_t>(s * 8 + k)) %
                                    static_cast<uint32_t>(mod));
        };
        cv::circle(img, cv::Point(r(0, width), r(1, height)), 2 + r(2, std::max(3, width / 4)),
                   cv::Scalar(r(3, 256), r(4, 256), r(5, 256)), -1, cv::LINE_AA);
    }
    if (channels == 1) {
        cv::Mat grey;
        cv::cvtColor(img, grey, cv::COLOR_RGB2GRAY);
        return grey;
    }
    return img;
}

// OpenCV's encoder: 4:2:0 chroma for colour; `img` in OpenCV's BGR order (or grey).
inline std::string cvJpeg(const cv::Mat& img, bool progressive = false, int quality = 90) {
    std::vector<uchar> buf;
    cv::imencode(".jpg", img, buf,
                 {cv::IMWRITE_JPEG_QUALITY, quality, cv::IMWRITE_JPEG_PROGRESSIVE, progressive ? 1 : 0});
    return std::string(buf.begin(), buf.end());
}

struct LibjpegOptions {
    int hSampling = 1, vSampling = 1;  // of the luma channel: 1,1 is 4:4:4, 2,1 is 4:2:2
    bool progressive = false;
    int restartRows = 0;  // a restart marker every N MCU rows
    bool cmyk = false;    // `img` has 4 channels, written as Adobe CMYK
    int quality = 90;
};

// libjpeg's encoder: `img` RGB (or grey, or 4-channel CMYK with `cmyk`).
inline std::string libjpegJpeg(const cv::Mat& img, const LibjpegOptions& o) {
    jpeg_compress_struct c;
    jpeg_error_mgr err;
    c.err = jpeg_std_error(&err);
    jpeg_create_compress(&c);
    unsigned char* buf = nullptr;
    unsigned long size = 0;
    jpeg_mem_dest(&c, &buf, &size);
    c.image_width = static_cast<JDIMENSION>(img.cols);
    c.image_height = static_cast<JDIMENSION>(img.rows);
    c.input_components = img.channels();
    c.in_color_space = img.channels() == 1 ? JCS_GRAYSCALE : o.cmyk ? JCS_CMYK : JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, o.quality, TRUE);
    if (img.channels() == 3) {
        c.comp_info[0].h_samp_factor = o.hSampling;
        c.comp_info[0].v_samp_factor = o.vSampling;
    }
    if (o.progressive) jpeg_simple_progression(&c);
    c.restart_in_rows = o.restartRows;
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = const_cast<JSAMPROW>(img.ptr<uchar>(static_cast<int>(c.next_scanline)));
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    std::string out(reinterpret_cast<const char*>(buf), size);
    std::free(buf);
    return out;
}

// The bytes with a restart marker planted at `fraction` of the way through: complete (the
// end-of-image marker is still there) but damaged; libjpeg warns when its decoding reaches it.
inline std::string damageJpeg(std::string bytes, double fraction) {
    const auto at = static_cast<size_t>(static_cast<double>(bytes.size()) * fraction);
    bytes[at] = '\xFF';
    bytes[at + 1] = '\xD5';
    return bytes;
}

// The bytes with an EXIF block (APP1) whose orientation tag is `orientation` (6: rotate 90°).
inline std::string withExifOrientation(const std::string& bytes, int orientation) {
    // Big-endian TIFF header, one IFD entry: tag 0x0112, type SHORT, count 1, the value; no next IFD.
    static const char head[] = "Exif\0\0MM\0\x2A\0\0\0\x08\0\x01\x01\x12\0\x03\0\0\0\x01\0";
    std::string payload(head, sizeof(head) - 1);
    payload += static_cast<char>(orientation);
    payload += std::string(6, '\0');
    const size_t length = payload.size() + 2;
    std::string app1 = "\xFF\xE1";
    app1 += static_cast<char>(length >> 8);
    app1 += static_cast<char>(length & 0xFF);
    return bytes.substr(0, 2) + app1 + payload + bytes.substr(2);
}

}  // namespace kiln::test
